export { createCsrFeature, type CsrFeature, type CsrFeatureOptions } from './lib/csr-feature';
export { CsrResolver } from './lib/csr.resolver';
export { announceClusterSettingsChanged, type AutoApproverOptions, type ImpostorDenied } from './lib/auto-approver';
export type { CsrPolicyOptions, CsrService } from './lib/csr.service';
export type { CsrDecisionObserver } from './lib/csr-decision.log';
export type { ClusterCertificates, NodeCertificatesService } from './lib/node-certificates.service';
