/** An outage of one cluster as remembered: since when, what the last attempt said, when to try again. */
export interface ClusterOutage {
  readonly since: number;
  readonly error: Error;
  readonly retryAt: number;
}

export interface ClusterReachabilityOptions {
  /** How long a failed cluster is answered from memory before one read may try it again. Default 5 000 ms. */
  readonly retryAfterMs?: number;
  readonly now?: () => number;
}

/**
 * Remembers which clusters did not answer, so that reads of a cluster that is down answer at
 * once from memory instead of each waiting for it, while one read per `retryAfterMs` is let
 * through to try again. Self-contained: it knows nothing of clients or watches.
 */
export class ClusterReachability {
  private readonly outages = new Map<string, { since: number; error: Error; retryAt: number }>();
  private readonly retryAfterMs: number;
  private readonly now: () => number;

  constructor(options: ClusterReachabilityOptions = {}) {
    this.retryAfterMs = options.retryAfterMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  /** Records that the cluster did not answer; an outage already recorded keeps its start. */
  failed(clusterId: string, error: Error): ClusterOutage {
    const now = this.now();
    const outage = { since: this.outages.get(clusterId)?.since ?? now, error, retryAt: now + this.retryAfterMs };
    this.outages.set(clusterId, outage);
    return outage;
  }

  /** Records that the cluster answered: the outage is over. */
  answered(clusterId: string): void {
    this.outages.delete(clusterId);
  }

  /**
   * The outage a read should answer with now, or null when the read may go to the cluster: no
   * outage is recorded, or it is time to try again. In the second case the next try is moved
   * on at once, so reads arriving meanwhile are answered from memory rather than all trying.
   */
  outage(clusterId: string): ClusterOutage | null {
    const outage = this.outages.get(clusterId);
    if (!outage) {
      return null;
    }
    const now = this.now();
    if (now < outage.retryAt) {
      return { ...outage };
    }
    outage.retryAt = now + this.retryAfterMs;
    return null;
  }

  /** Whether an outage is recorded, due for a retry or not. */
  isDown(clusterId: string): boolean {
    return this.outages.has(clusterId);
  }
}
