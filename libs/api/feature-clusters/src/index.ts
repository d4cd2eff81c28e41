export { createClusterFeature, type ClusterFeature, type ClusterFeatureOptions } from './lib/cluster-feature';
export { ClusterResolver } from './lib/cluster.resolver';
export type { ClusterService } from './lib/cluster.service';
export { ClusterCheckResolver } from './lib/cluster-check.resolver';
export { APPLY_SHIPPED_RBAC, ClusterCheckService, type ClusterCheck, type ClusterCheckName } from './lib/cluster-check.service';
