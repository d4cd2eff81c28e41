import type { Logger } from 'pino';
import { PeriodicQueueing, type PendingCsrEvent, type WebhookStore } from '@ccos/api/data-access-db';
import type { CsrSummary } from '@ccos/api/data-access-kube';
import type { Clock } from '@ccos/shared/util-timing';

const NODE_PREFIX = 'system:node:';

/** The node a CSR is for: its subject's `system:node:` name, else its requester's, else the CSR's own name. */
export function csrNodeName(csr: Pick<CsrSummary, 'name' | 'username' | 'request'>): string {
  const commonName = csr.request.ok ? csr.request.request.commonName : null;
  if (commonName?.startsWith(NODE_PREFIX)) {
    return commonName.slice(NODE_PREFIX.length);
  }
  if (csr.username?.startsWith(NODE_PREFIX)) {
    return csr.username.slice(NODE_PREFIX.length);
  }
  return csr.name;
}

/** The CSRs of `csrs` pending for at least `pendingMs` at `now`, as events of `clusterId`. */
export function overduePendingCsrs(clusterId: string, csrs: readonly CsrSummary[], now: number, pendingMs: number): PendingCsrEvent[] {
  return csrs
    .filter((csr) => csr.state === 'Pending' && csr.createdAt !== null && now - Date.parse(csr.createdAt) >= pendingMs)
    .map((csr) => ({ clusterId, csrName: csr.name, nodeName: csrNodeName(csr), requester: csr.username, signerName: csr.signerName, createdAt: new Date(csr.createdAt ?? 0) }));
}

export interface CsrWaitWatchOptions {
  readonly store: Pick<WebhookStore, 'clustersWithEndpoints' | 'recordPendingCsrs'>;
  /** The cluster's CSRs as its watch holds them (null when the cluster cannot be watched now). */
  readonly csrs: (clusterId: string) => Promise<readonly CsrSummary[] | null>;
  /** How long a CSR is pending before the cluster's webhooks hear of it (WEBHOOK_CSR_PENDING_MINUTES). */
  readonly pendingMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How often the clusters with endpoints are looked at. Default 30 s. */
  readonly everyMs?: number;
}

/**
 * Records a `csr.pending` event for each CSR of a cluster with webhook endpoints that has been
 * pending longer than `pendingMs` (an install waiting for an operator's approval, a kubelet
 * nobody expected): once per CSR, whichever API process sees it first.
 */
export class CsrWaitWatch {
  private readonly timer: PeriodicQueueing;
  /** The CSRs known to be recorded, per cluster (forgotten once no longer pending), so each is written once from here. */
  private readonly recorded = new Map<string, Set<string>>();

  constructor(private readonly options: CsrWaitWatchOptions) {
    this.timer = new PeriodicQueueing(options.everyMs ?? 30_000, () => this.check(), (error) => options.logger.warn({ err: error }, 'could not look for CSRs pending too long'));
  }

  start(): void {
    this.timer.start();
  }

  stop(): void {
    this.timer.stop();
  }

  /** Looks once; the number of CSRs recorded now. */
  async check(): Promise<number> {
    let recorded = 0;
    for (const clusterId of await this.options.store.clustersWithEndpoints()) {
      const csrs = await this.options.csrs(clusterId).catch((error: unknown) => {
        this.options.logger.info({ err: error, clusterId }, 'could not read the cluster\'s CSRs for its webhooks; looking again later');
        return null;
      });
      if (!csrs) {
        continue;
      }
      const overdue = overduePendingCsrs(clusterId, csrs, this.options.clock.now(), this.options.pendingMs);
      const known = this.recorded.get(clusterId) ?? new Set<string>();
      recorded += await this.options.store.recordPendingCsrs(overdue.filter((event) => !known.has(event.csrName)));
      this.recorded.set(clusterId, new Set(overdue.map((event) => event.csrName)));
    }
    return recorded;
  }
}
