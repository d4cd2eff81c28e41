import type { Logger } from 'pino';
import { type NodeEntity, type NodeStore, reasonFields } from '@ccos/api/data-access-db';
import { sshTargetOf } from '@ccos/api/data-access-hosts';
import type { SshPool } from '@ccos/api/data-access-ssh';
import { PreconditionError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type HostVerdict, type Leftover, cleanupPaths, decideHostVerdict, statusText } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';
import { cleanHost, scanHost } from './host-scan';

/**
 * Ends the cluster-side leftovers of a host: deletes a Node that is not Ready, denies the CSRs left
 * pending under its name (as a removal does: the service's role may decide CSRs, not delete them),
 * through the one CSR decision path, so the denial is recorded with the operator who asked.
 */
export interface ClusterLeftoverCleaner {
  deleteNode(clusterId: string, name: string): Promise<void>;
  denyCsr(clusterId: string, name: string, actor: string): Promise<void>;
}

/**
 * The cluster object a leftover names. Verdicts stored before leftovers carried `name` have only
 * the shown item (`Node/<name> (Ready)`, `CertificateSigningRequest/<name>`) to go by.
 */
function clusterObjectName(leftover: Leftover): string {
  return leftover.name ?? leftover.item.replace(/^(Node|CertificateSigningRequest)\//, '').replace(/ \(.*\)$/, '');
}

/**
 * Cleans what an earlier membership left on a host (and in the cluster), on an operator's
 * confirmation only, and exactly what the stored verdict listed. The host is scanned again
 * afterwards; the verdict records when the cleanup ran.
 */
export class HostCleanupService {
  constructor(
    private readonly nodes: NodeStore,
    private readonly secrets: SecretBox,
    private readonly pool: SshPool,
    private readonly cluster: ClusterLeftoverCleaner | null,
    private readonly logger: Logger,
  ) {}

  async clean(nodeId: string, actor: string): Promise<NodeEntity> {
    const node = await this.nodes.get(nodeId);
    const verdict = node.hostVerdict;
    if (!verdict || verdict.verdict !== 'CLEANABLE' || verdict.cleanedAt) {
      throw new PreconditionError(
        verdict?.verdict === 'REINSTALL_REQUIRED'
          ? message('cleanup.reinstallRequired', { hostname: node.hostname, reason: verdict.reasonCoded ?? verdict.reason })
          : message('cleanup.nothingToClean', { hostname: node.hostname, state: verdict ? (verdict.cleanedAt ? 'cleaned' : verdict.verdict) : 'unchecked' }),
      );
    }
    if (node.status !== 'READY_TO_INSTALL') {
      throw new PreconditionError(message('cleanup.needsReady', { hostname: node.hostname, status: statusText(node.status) }), { status: node.status });
    }
    const clusterItems = verdict.leftovers.filter((leftover) => leftover.kind === 'CLUSTER_NODE' || leftover.kind === 'CLUSTER_CSRS');
    if (clusterItems.length > 0 && !this.cluster) {
      throw new PreconditionError(message('cleanup.clusterUnreachable'));
    }
    const remaining = await this.pool.run(sshTargetOf(node, this.secrets), async (session) => {
      await cleanHost(session, cleanupPaths(verdict.leftovers));
      return (await scanHost(session)).leftovers;
    });
    for (const leftover of clusterItems) {
      const name = clusterObjectName(leftover);
      await (leftover.kind === 'CLUSTER_NODE' ? this.cluster?.deleteNode(node.clusterId, name) : this.cluster?.denyCsr(node.clusterId, name, actor));
    }
    const left: Leftover[] = remaining.filter((leftover) => verdict.leftovers.some((listed) => listed.item === leftover.item) || leftover.kind === 'KUBELET_SERVICE');
    if (left.length > 0) {
      const again: HostVerdict = decideHostVerdict(remaining);
      await this.nodes.update(node.id, { hostVerdict: again });
      throw new PreconditionError(message('cleanup.leftBehind', { hostname: node.hostname, items: left.map((leftover) => leftover.item).join(', ') }));
    }
    this.logger.info({ nodeId: node.id, actor, items: verdict.leftovers.length }, 'cleaned the leftovers of an earlier membership');
    return this.nodes.update(node.id, { hostVerdict: { ...verdict, cleanedAt: new Date().toISOString() }, ...reasonFields(message('node.leftoversCleaned', { actor })) });
  }
}
