export { createAutoscalingFeature, type AutoscalingFeature, type AutoscalingFeatureOptions } from './lib/autoscaling-feature';
export type { AutoscalingObserver, AutoscalingPorts, SpareHost } from './lib/autoscaling-ports';
export { NodeGroupResolver, type AutoscalerConnections } from './lib/node-group.resolver';
export type { NodeGroups } from './lib/node-groups';
export { AUTOSCALER_CLIENT_PREFIX, DEFAULT_AUTOSCALING_OPTIONS, type AutoscalingOptions, type CloudProviderServerOptions } from './lib/cloud-provider.grpc';
