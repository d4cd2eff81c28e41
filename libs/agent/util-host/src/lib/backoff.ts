/** Capped exponential backoff settings. */
export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Growth per attempt (default 2). */
  readonly factor?: number;
  /**
   * Share of each delay that is random (0..1, default 0.5): the delay is
   * drawn from [base × (1 − jitter), base], so agents that lost the same
   * service at the same moment do not come back in lockstep.
   */
  readonly jitter?: number;
}

/** Events and diagnostics: 0.5 s, 1 s, 2 s … up to 30 s. */
export const EVENT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };
/** Downloads come back quickly after a cut link: 0.5 s … 10 s. */
export const DOWNLOAD_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 10_000 };

/** The delays of one retry sequence; `reset` after a success. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt. */
  next(): number {
    const factor = this.policy.factor ?? 2;
    const jitter = Math.min(1, Math.max(0, this.policy.jitter ?? 0.5));
    const base = Math.min(this.policy.maxMs, this.policy.initialMs * factor ** Math.min(this.attempt, 64));
    this.attempt += 1;
    return Math.round(base * (1 - jitter) + this.random() * base * jitter);
  }

  /** How many delays were handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}
