import type { ClusterConnections, ClusterProbe } from '@ccos/api/data-access-cluster-connections';
import { deleteNode } from '@ccos/api/data-access-kube';
import type { CsrService } from '@ccos/api/feature-csrs';
import type { ClusterLeftoverCleaner } from '@ccos/api/feature-nodes';
import { PreconditionError } from '@ccos/api/util-graphql';
import { AppError } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';

/**
 * Answers the agent's questions about the cluster from each cluster connection's watch cache
 * (Nodes; CSRs through the CSR service), so an agent polling every few seconds costs the API
 * server nothing.
 */
export function clusterProbeFrom(connections: ClusterConnections, csrs: CsrService): ClusterProbe {
  return {
    async nodeState(clusterId, nodeName) {
      const node = (await connections.watch(clusterId)).nodes().find((candidate) => candidate.name === nodeName);
      return { registered: node !== undefined, ready: node?.ready ?? false };
    },
    pendingCsrNames: (clusterId, nodeName) => csrs.pendingCsrNamesFor(clusterId, nodeName),
    async conflicts(clusterId, nodeName, ip) {
      const nodes = (await connections.watch(clusterId)).nodes();
      const sameName = nodes.find((node) => node.name === nodeName);
      const sameIp = ip ? nodes.find((node) => node.name !== nodeName && node.addresses.some((address) => address.address === ip)) : undefined;
      return {
        hostname: sameName ? message('cluster.conflict.hostname', { node: nodeName, ready: sameName.ready }) : null,
        ip: sameIp && ip ? message('cluster.conflict.ip', { node: sameIp.name, ip }) : null,
      };
    },
  };
}

/** The reason a cleanup's denial gives (the kubelet, the decision record and the audit read it). */
export const CLEANUP_DENY_REASON = 'left pending by an earlier membership of this host; denied by its cleanup';

/**
 * Ends a host's leftovers in its cluster: Nodes through the cluster's connection, CSRs through the
 * CSR service's one decision path (recorded with the operator's name). What the cluster refuses is a
 * coded refusal the operator reads.
 */
export function clusterLeftoverCleaner(connections: ClusterConnections, csrs: Pick<CsrService, 'deny'>): ClusterLeftoverCleaner {
  return {
    async deleteNode(clusterId, name) {
      const client = (await connections.ensure(clusterId)).client;
      const result = await deleteNode(client, name);
      if (!result.ok) {
        throw new PreconditionError(message('cleanup.nodeNotDeleted', { name, reason: result.reason }));
      }
    },
    async denyCsr(clusterId, name, actor) {
      try {
        await csrs.deny(clusterId, name, actor, CLEANUP_DENY_REASON);
      } catch (error) {
        if (error instanceof AppError) {
          throw new PreconditionError(message('cleanup.csrNotDenied', { name, reason: error.text }));
        }
        throw error;
      }
    },
  };
}
