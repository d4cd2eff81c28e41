export { createRemovalFeature, type RemovalFeature, type RemovalFeatureOptions } from './lib/removal-feature';
export { RemovalResolver } from './lib/removal.resolver';
export type { RemovalService } from './lib/removal.service';
export type { BlockedDrain, RemovalRunnerOptions } from './lib/removal-runner';
export type { RemovalGauges } from './lib/removal-gauges';
export type { ClusterAccess, CsrLeftovers, HostAccess, RemovalObserver } from './lib/removal-ports';
