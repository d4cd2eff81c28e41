import type { Logger } from 'pino';
import type { AuditLog, ClusterStore, NodeGroupStore, NodeStore } from '@ccos/api/data-access-db';
import type { EventBus } from '@ccos/api/util-graphql';
import type { AutoscalingObserver, AutoscalingPorts } from './autoscaling-ports';
import { type CloudProviderServerOptions, type RunningCloudProvider, startCloudProviderServer } from './cloud-provider.grpc';
import { NodeGroupService } from './node-group.service';

export interface AutoscalingFeatureOptions {
  readonly nodeGroups: NodeGroupStore;
  readonly clusters: ClusterStore;
  readonly nodes: NodeStore;
  readonly ports: AutoscalingPorts;
  readonly audit: AuditLog;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly observer?: AutoscalingObserver;
  /** Node roles an OPERATOR may give besides worker (ALLOW_NODE_ROLES); a group with another needs an ADMIN and a reason. */
  readonly allowedNodeRoles?: readonly string[];
  /** The externalgrpc provider's listener and mTLS material; null keeps it off. */
  readonly grpc: (() => Promise<CloudProviderServerOptions>) | null;
}

/** The autoscaling feature as the composition root sees it. */
export interface AutoscalingFeature {
  readonly groups: NodeGroupService;
  /** The gRPC provider's port once started; null while off. */
  grpcPort(): number | null;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createAutoscalingFeature(options: AutoscalingFeatureOptions): AutoscalingFeature {
  const groups = new NodeGroupService(options.nodeGroups, options.clusters, options.nodes, options.ports, options.audit, options.events, options.logger, options.observer ?? null, options.allowedNodeRoles);
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
