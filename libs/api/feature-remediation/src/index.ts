export { createRemediationFeature, type RemediationFeature } from './lib/remediation-feature';
export { RemediationResolver } from './lib/remediation.resolver';
export { type HostHealthProbe, type RemediationObserver, REMEDIATION_ACTOR } from './lib/remediator';
