export { createCsrFeature, type CsrFeature, type CsrFeatureOptions } from './lib/csr-feature';
export { CsrResolver } from './lib/csr.resolver';
export { announceClusterSettingsChanged, type ApproverLeadership, type AutoApproverOptions, DEFAULT_MAX_PENDING_CSRS, type ImpostorDenied, type PendingGuard } from './lib/auto-approver';
export type { CsrPolicyOptions, CsrService } from './lib/csr.service';
export type { CsrDecisionObserver } from './lib/csr-decision.log';
export type { ClusterCertificates, NodeCertificatesService } from './lib/node-certificates.service';
