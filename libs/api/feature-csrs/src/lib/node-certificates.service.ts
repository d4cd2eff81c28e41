import type { Logger } from 'pino';
import type { ClusterDirectory } from '@ccos/api/data-access-cluster-connections';
import type { ClusterEntity } from '@ccos/api/data-access-db';
import { type CsrFacts, type CsrVerdict, CERTIFICATE_WARNING_DAYS, currentNodeCertificates, expiresWithin, oldestPendingRenewals } from '@ccos/shared/domain';
import type { CsrService } from './csr.service';
import type { NodeCertificateType, PendingRenewalType } from './node-certificate.type';

/** One cluster's certificate picture: what each node holds, and renewals waiting. */
export interface ClusterCertificates {
  readonly clusterId: string;
  readonly clusterName: string;
  readonly certificates: NodeCertificateType[];
  readonly pendingRenewals: PendingRenewalType[];
}

/**
 * Certificate expiry per node, from the watch cache of the cluster's CSRs: the validity of the
 * newest client and serving certificate the kubelet signers issued for each node, and the oldest
 * renewal waiting for a decision. What the node page, the node list and the metrics show.
 */
export class NodeCertificatesService {
  constructor(
    private readonly clusters: ClusterDirectory,
    private readonly csrs: CsrService,
    private readonly logger: Logger,
  ) {}

  /** A cluster's nodes' certificates (those of one node when `node` is given). */
  async of(clusterId: string, node?: string | null): Promise<ClusterCertificates> {
    const snapshot = await this.csrs.snapshot(clusterId);
    const { inventory, context } = snapshot;
    const now = context.now;
    const idOf = (name: string): string | null => inventory.find((entry) => entry.hostname.toLowerCase() === name)?.id ?? null;
    const wanted = (name: string): boolean => !node || name === node.toLowerCase();
    const certificates = currentNodeCertificates(context.csrs)
      .filter((entry) => wanted(entry.node))
      .map((entry) => ({
        node: entry.node,
        nodeId: idOf(entry.node),
        kind: entry.kind,
        source: 'ISSUED_CSR' as const,
        csrName: entry.csrName,
        notBefore: entry.notBefore,
        notAfter: entry.notAfter,
        expiresInSeconds: Math.floor((entry.notAfter.getTime() - now.getTime()) / 1000),
        expiringSoon: expiresWithin(entry.notAfter, now, CERTIFICATE_WARNING_DAYS),
      }));
    const verdictOf = (csr: CsrFacts) => snapshot.verdictOf(csr.name);
    const pendingRenewals = oldestPendingRenewals(context.csrs, verdictOf)
      .filter((entry) => wanted(entry.node))
      .map((entry) => ({ node: entry.node, nodeId: idOf(entry.node), csrName: entry.csrName, createdAt: entry.createdAt, reason: this.whyPending(snapshot.cluster, snapshot.verdictOf(entry.csrName)) }));
    return { clusterId, clusterName: snapshot.cluster.name, certificates, pendingRenewals };
  }

  /** Why a renewal waits: the switch when it is off, else the policy's first failed check. */
  private whyPending(cluster: Pick<ClusterEntity, 'autoApproveRenewals'>, verdict: CsrVerdict): string {
    if (!cluster.autoApproveRenewals) {
      return `renewal auto-approve is off for this cluster; ${verdict.decision === 'APPROVE' ? 'the renewal policy would approve it' : verdict.reason}`;
    }
    return verdict.reason;
  }

  /** Every registered cluster's picture; clusters that cannot be read now are left out (and logged). */
  async all(): Promise<ClusterCertificates[]> {
    const clusters = await this.clusters.list();
    const found = await Promise.all(
      clusters.map((cluster) =>
        this.of(cluster.id).catch((error: unknown) => {
          this.logger.debug({ err: error, clusterId: cluster.id }, 'no certificate figures for an unreachable cluster');
          return null;
        }),
      ),
    );
    return found.filter((entry): entry is ClusterCertificates => entry !== null);
  }
}
