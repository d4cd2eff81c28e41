/** Capped exponential backoff settings. */
export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Growth per attempt (default 2). */
  readonly factor?: number;
  /**
   * Share of each delay that is random (0..1, default 0.5), so clients that
   * lost the same service at the same moment do not come back in lockstep.
   */
  readonly jitter?: number;
  /**
   * Where the random share lies (default `below`): `below` draws each delay
   * from [base × (1 − jitter), base], so the cap is never exceeded;
   * `around` from [base × (1 − jitter), base × (1 + jitter)], as client-go's
   * reflector does.
   */
  readonly spread?: 'below' | 'around';
}

/** Agent events and diagnostics: 0.5 s, 1 s, 2 s … up to 30 s. */
export const EVENT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };
/** Agent downloads come back quickly after a cut link: 0.5 s … 10 s. */
export const DOWNLOAD_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 10_000 };

/**
 * The delay before retry number `attempt` (0 for the first retry after a
 * failure); `random` returns a number in [0, 1).
 */
export function backoffDelayMs(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const factor = policy.factor ?? 2;
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0.5));
  const base = Math.min(policy.maxMs, policy.initialMs * factor ** Math.min(Math.max(0, attempt), 64));
  const width = policy.spread === 'around' ? 2 * jitter : jitter;
  return Math.round(base * (1 - jitter) + random() * base * width);
}

/** The delays of one retry sequence; `reset` after a success. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt. */
  next(): number {
    const delay = backoffDelayMs(this.policy, this.attempt, this.random);
    this.attempt += 1;
    return delay;
  }

  /** How many delays were handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}
