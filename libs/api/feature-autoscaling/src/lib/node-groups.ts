import type { Logger } from 'pino';
import type { AuditLog, ClusterStore, NodeGroupStore, NodeStore } from '@ccos/api/data-access-db';
import type { EventBus } from '@ccos/api/util-graphql';
import type { AutoscalingObserver, AutoscalingPorts } from './autoscaling-ports';
import { GroupActivityLog } from './group-activity-log';
import { MemberReconciler } from './member-reconciler';
import { NodeGroupRegistry } from './node-group-registry';
import { ScalingOperations } from './scaling-operations';

export interface NodeGroupsOptions {
  readonly nodeGroups: NodeGroupStore;
  readonly clusters: ClusterStore;
  readonly nodes: NodeStore;
  readonly ports: AutoscalingPorts;
  readonly audit: AuditLog;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly observer?: AutoscalingObserver | null;
  /** Node roles an OPERATOR may give besides worker (ALLOW_NODE_ROLES); a group with another needs an ADMIN and a reason. */
  readonly allowedNodeRoles?: readonly string[];
}

/**
 * Node groups over pools of spare hosts, in three parts: the registry (groups, spares, what
 * cluster-autoscaler and the console read), the scaling operations (up, down, replace), and the
 * member reconciler (each member moved along its node record). Every decision any of them takes
 * goes through one activity log (stored, audited, counted, published).
 */
export interface NodeGroups {
  readonly registry: NodeGroupRegistry;
  readonly scaling: ScalingOperations;
  readonly members: MemberReconciler;
  /** Follows the node changes of every cluster with a group, and settles what changed while the service was down. */
  start(): Promise<void>;
  /** Stops following node changes, then waits for the removals scale-downs and replacements started. */
  stop(): Promise<void>;
}

export function createNodeGroups(options: NodeGroupsOptions): NodeGroups {
  const activity = new GroupActivityLog(options.nodeGroups, options.audit, options.events, options.logger, options.observer ?? null);
  const members = new MemberReconciler(options.nodeGroups, options.nodes, options.ports, activity, options.events, options.logger);
  const registry = new NodeGroupRegistry(options.nodeGroups, options.clusters, options.nodes, options.ports, activity, members, options.allowedNodeRoles);
  const scaling = new ScalingOperations(options.nodeGroups, options.clusters, options.nodes, options.ports, activity, registry, options.logger);
  return {
    registry,
    scaling,
    members,
    start: () => members.start(),
    async stop() {
      await members.stop();
      await scaling.settled();
    },
  };
}
