import { resourceNotFound } from './api-error';
import type { ResourceDefinition, ResourceStrategy, SubresourceDefinition } from './resource-definition';
import { CSR_FIELD_LABELS, CSR_STRATEGY } from './resources/certificate-signing-requests';
import { CRD_STRATEGY } from './resources/custom-resource-definitions';
import { fieldAt, metadataFieldLabels } from './resources/field-labels';
import { NAMESPACE_FIELD_LABELS, NAMESPACE_STRATEGY } from './resources/namespaces';
import { NODE_FIELD_LABELS, NODE_STRATEGY } from './resources/nodes';
import { PDB_STRATEGY } from './resources/pod-disruption-budgets';
import { POD_FIELD_LABELS, POD_STRATEGY } from './resources/pods';
import { bindingStrategy, roleStrategy } from './resources/rbac';
import { SECRET_FIELD_LABELS, SECRET_STRATEGY } from './resources/secrets';
import { SERVICE_STRATEGY } from './resources/services';
import { workloadStrategy } from './resources/workloads';
import type { FieldGetter } from './selectors';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
const STATUS: SubresourceDefinition = { name: 'status', kind: '', verbs: ['get', 'patch', 'update'] };

/** What {@link define} needs to know of a resource. */
export interface ResourceSpec {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  subresources?: SubresourceDefinition[];
  fieldLabels?: Record<string, FieldGetter>;
  tracksGeneration?: boolean;
  strategy?: ResourceStrategy;
  verbs?: readonly string[];
}

/** A resource's definition with the discovery defaults of a 1.32 API server. */
export function define(spec: ResourceSpec): ResourceDefinition {
  return {
    group: spec.group,
    version: spec.version,
    resource: spec.resource,
    singular: spec.kind.toLowerCase(),
    kind: spec.kind,
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: spec.verbs ?? ALL_VERBS,
    subresources: (spec.subresources ?? []).map((s) => ({ ...s, kind: s.kind || spec.kind })),
    fieldLabels: { ...metadataFieldLabels(spec.namespaced), ...spec.fieldLabels },
    tracksGeneration: spec.tracksGeneration ?? false,
    strategy: spec.strategy ?? {},
  };
}

/**
 * Every resource the simulator serves, with the discovery data of a 1.32 API server.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/
 */
export const RESOURCES: readonly ResourceDefinition[] = [
  define({ group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'], subresources: [STATUS, { name: 'finalize', kind: '', verbs: ['update'] }], fieldLabels: NAMESPACE_FIELD_LABELS, strategy: NAMESPACE_STRATEGY, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] }),
  define({ group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], subresources: [STATUS], fieldLabels: NODE_FIELD_LABELS, strategy: NODE_STRATEGY }),
  define({
    group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'],
    subresources: [{ name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] }, STATUS],
    fieldLabels: POD_FIELD_LABELS, strategy: POD_STRATEGY,
  }),
  define({ group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true, fieldLabels: SECRET_FIELD_LABELS, strategy: SECRET_STRATEGY }),
  define({ group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true, shortNames: ['svc'], categories: ['all'], subresources: [STATUS], strategy: SERVICE_STRATEGY, verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] }),
  define({ group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] }),
  // Stored and served only (deploy/'s claim): no volume is provisioned or bound.
  define({ group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true, shortNames: ['pvc'] }),
  define({
    group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'],
    subresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
  }),
  define({
    group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'],
    fieldLabels: {
      'involvedObject.kind': fieldAt('involvedObject.kind', ''), 'involvedObject.namespace': fieldAt('involvedObject.namespace', ''),
      'involvedObject.name': fieldAt('involvedObject.name', ''), 'involvedObject.uid': fieldAt('involvedObject.uid', ''),
      'involvedObject.apiVersion': fieldAt('involvedObject.apiVersion', ''), 'involvedObject.resourceVersion': fieldAt('involvedObject.resourceVersion', ''),
      'involvedObject.fieldPath': fieldAt('involvedObject.fieldPath', ''), reason: fieldAt('reason', ''), reportingComponent: fieldAt('reportingComponent', ''),
      source: fieldAt('source.component', ''), type: fieldAt('type', ''),
    },
  }),
  define({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, shortNames: ['deploy'], categories: ['all'], subresources: [STATUS], tracksGeneration: true, strategy: workloadStrategy(true) }),
  define({ group: 'apps', version: 'v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true, shortNames: ['rs'], categories: ['all'], subresources: [STATUS], tracksGeneration: true, strategy: workloadStrategy(true), fieldLabels: { 'status.replicas': fieldAt('status.replicas', '0') } }),
  define({ group: 'apps', version: 'v1', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true, shortNames: ['ds'], categories: ['all'], subresources: [STATUS], tracksGeneration: true, strategy: workloadStrategy(false) }),
  define({ group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet', namespaced: true, shortNames: ['sts'], categories: ['all'], subresources: [STATUS], tracksGeneration: true, strategy: workloadStrategy(true) }),
  define({ group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true, shortNames: ['pdb'], subresources: [STATUS], tracksGeneration: true, strategy: PDB_STRATEGY }),
  define({
    group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests', kind: 'CertificateSigningRequest', namespaced: false, shortNames: ['csr'],
    subresources: [{ name: 'approval', kind: '', verbs: ['get', 'patch', 'update'] }, STATUS], fieldLabels: CSR_FIELD_LABELS, strategy: CSR_STRATEGY,
  }),
  define({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true }),
  // Stored and served only: no network plugin enforces them.
  define({ group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true, shortNames: ['netpol'], tracksGeneration: true }),
  // Stored and served only (deploy/'s Ingress): no ingress controller serves them.
  define({ group: 'networking.k8s.io', version: 'v1', resource: 'ingresses', kind: 'Ingress', namespaced: true, shortNames: ['ing'], tracksGeneration: true }),
  define({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'], subresources: [STATUS], tracksGeneration: true, strategy: CRD_STRATEGY }),
  define({ group: 'authentication.k8s.io', version: 'v1', resource: 'selfsubjectreviews', kind: 'SelfSubjectReview', namespaced: false, verbs: ['create'] }),
  define({ group: 'authorization.k8s.io', version: 'v1', resource: 'localsubjectaccessreviews', kind: 'LocalSubjectAccessReview', namespaced: true, verbs: ['create'] }),
  define({ group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview', namespaced: false, verbs: ['create'] }),
  define({ group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview', namespaced: false, verbs: ['create'] }),
  define({ group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews', kind: 'SubjectAccessReview', namespaced: false, verbs: ['create'] }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false, strategy: bindingStrategy(false) }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false, strategy: roleStrategy(false) }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', kind: 'RoleBinding', namespaced: true, strategy: bindingStrategy(true) }),
  define({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true, strategy: roleStrategy(true) }),
];

/** Looks a resource up by group, version and plural name; 404 when it is not served. */
export function findResource(group: string, version: string, resource: string, resources: readonly ResourceDefinition[] = RESOURCES): ResourceDefinition {
  const def = resources.find((d) => d.group === group && d.version === version && d.resource === resource);
  if (!def) {
    throw resourceNotFound();
  }
  return def;
}

/** Looks a resource up by apiVersion and kind (for seed documents). */
export function resourceForKind(apiVersion: string, kind: string, resources: readonly ResourceDefinition[] = RESOURCES): ResourceDefinition | undefined {
  return resources.find((d) => (d.group ? `${d.group}/${d.version}` : d.version) === apiVersion && d.kind === kind);
}
