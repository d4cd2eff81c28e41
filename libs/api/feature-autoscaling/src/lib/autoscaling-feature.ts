import { type CloudProviderServerOptions, type RunningCloudProvider, startCloudProviderServer } from './cloud-provider.grpc';
import { type NodeGroups, type NodeGroupsOptions, createNodeGroups } from './node-groups';

export interface AutoscalingFeatureOptions extends NodeGroupsOptions {
  /** The externalgrpc provider's listener and mTLS material; null keeps it off. */
  readonly grpc: (() => Promise<CloudProviderServerOptions>) | null;
}

/** The autoscaling feature as the composition root sees it. */
export interface AutoscalingFeature {
  readonly groups: NodeGroups;
  /** The gRPC provider's port once started; null while off. */
  grpcPort(): number | null;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createAutoscalingFeature(options: AutoscalingFeatureOptions): AutoscalingFeature {
  const groups = createNodeGroups(options);
  let server: RunningCloudProvider | null = null;
  return {
    groups,
    grpcPort: () => server?.port ?? null,
    async start() {
      await groups.start();
      if (options.grpc) {
        server = await startCloudProviderServer(groups, options.logger, await options.grpc());
      }
    },
    async stop() {
      await server?.close();
      server = null;
      await groups.stop();
    },
  };
}
