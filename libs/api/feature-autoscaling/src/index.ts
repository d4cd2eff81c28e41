export * from './lib/autoscaling-ports';
export * from './lib/autoscaling-feature';
export * from './lib/node-group.service';
export * from './lib/node-group.resolver';
export * from './lib/node-group.type';
export * from './lib/node-group.input';
export { AUTOSCALER_CLIENT_PREFIX, DEFAULT_AUTOSCALING_OPTIONS, type AutoscalingOptions, type CloudProviderServerOptions } from './lib/cloud-provider.grpc';
export { CLOUD_PROVIDER_SERVICE, EXTERNALGRPC_PROTO, NODE_PROTO, protoDir } from './lib/proto-files';
export { encodeTemplateNode, templateNode, v1NodeType } from './lib/template-node';
