export { createClusterFeature, type ClusterFeature, type ClusterFeatureOptions } from './lib/cluster-feature';
export { ClusterResolver } from './lib/cluster.resolver';
export type { ClusterService } from './lib/cluster.service';
