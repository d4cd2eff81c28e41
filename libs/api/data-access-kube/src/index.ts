export {
  createKubeClient,
  isStatus,
  KubeApiError,
  KubeClientConfigError,
  type KubeApiErrorKind,
  type KubeClient,
  type KubeClientOptions,
  type KubeCredentials,
  type KubeStatus,
  type WatchLineHandler,
} from './lib/kube-client';
export {
  ADDRESS_POLICY_VARIABLE,
  ClusterAddressGuard,
  ClusterAddressRefusedError,
  STRICT_ADDRESS_POLICY,
  hostOf,
  parseAddressPolicy,
  refusedRangeOf,
  resolveClusterHost,
  type AddressPurpose,
  type AddressVerdict,
  type ClusterAddressPolicy,
  type HostCheck,
  type RefusedAddressClass,
  type RefusedAddressRange,
} from './lib/cluster-address';
export { InformerCache, startInformer, type Indexer, type Informer, type InformerEvent, type InformerObject, type InformerOptions, type InformerSource, type ListPage, type WatchEventType } from './lib/informer';
export { listNodes, summarizeNode, watchNodes, isoTime, CONTROL_PLANE_TAINT_KEYS, NODE_ROLE_LABEL_PREFIX, type NodeEvent, type NodeInventory, type NodeSummary, type NodeTaint } from './lib/node-inventory';
export { cpuMillicores, parseQuantity, wholeUnits } from './lib/quantity';
export { cordonNode, uncordonNode, setUnschedulable, type CordonResult } from './lib/cordon';
export { setManagedNodeMarks, type ManagedNodeMarks, type NodeMarksResult } from './lib/node-labels';
export {
  DAEMONSET_FATAL,
  DAEMONSET_WARNING,
  LOCAL_STORAGE_FATAL,
  LOCAL_STORAGE_WARNING,
  MIRROR_POD_ANNOTATION,
  UNMANAGED_FATAL,
  UNMANAGED_WARNING,
  classifyPods,
  listPodsOnNode,
  refusalMessage,
  type DrainAction,
  type DrainOptions,
  type DrainPlan,
  type DrainPlanBudget,
  type DrainPlanPod,
  type DrainPodClass,
} from './lib/drain-plan';
export { podForPlanning, watchPods, SCHEDULED_PODS_SELECTOR, type PodEvent, type PodWatch } from './lib/pod-watch';
export { drainNode, planDrain, type DrainBlockingPod, type DrainEvent, type DrainFailure, type DrainResult, type DrainSkippedPod } from './lib/drain';
export { deleteNode, type DeleteNodeResult } from './lib/delete-node';
export { API_SERVICE, readApiServiceAddresses } from './lib/cluster-service';
export { parseIssuedCertificate, type IssuedCertificate } from './lib/issued-certificate';
export { parseCertificateRequest, type CertificateRequestParse, type ParsedCertificateRequest, type RequestPublicKey } from './lib/csr-request';
export { csrState, listCsrs, summarizeCsr, watchCsrs, CsrRequestCache, CREDENTIAL_ID_KEY, type CsrCondition, type CsrEvent, type CsrState, type CsrSummary, type CsrWatch } from './lib/csr';
export { approveCsr, denyCsr, type CsrDecisionOptions, type CsrDecisionResult } from './lib/csr-approval';
export { startLeaderElection, type LeaderElectionOptions, type LeaderElector } from './lib/leases';
export { capacityCheck, podRequests, type CapacityCheck, type CapacityInputs, type CapacityDetail, type PodRequests, type Resources } from './lib/capacity-check';
export { drainDeadNode, type DeadNodeDrainOptions } from './lib/ungraceful-drain';
export {
  MIN_TOKEN_EXPIRATION_SECONDS,
  listBootstrapIdentities,
  mayFileCsrs,
  mintBootstrapIdentity,
  parseServiceAccountUsername,
  revokeBootstrapIdentity,
  serviceAccountUsername,
  type BootstrapIdentity,
  type MintOptions,
} from './lib/bootstrap-identity';
export { readClusterVersion, releaseOfClusterVersion, releaseOfGitVersion, type ClusterVersionReading } from './lib/cluster-version';
export {
  DEFAULT_SERVICE_NAMESPACES,
  SERVICE_RULES,
  SHIPPED_SERVICE_SUBJECT,
  bootstrapIdentitiesManifest,
  describePermission,
  servicePermissions,
  subjectOfUsername,
  type PolicyRule,
  type RbacSubject,
  type ServiceNamespaces,
  type ServicePermission,
  type ServiceRole,
} from './lib/service-permissions';
export { readClusterReadiness, readUsername, type BootstrapNamespaceVerdict, type ClusterReadiness } from './lib/cluster-readiness';
