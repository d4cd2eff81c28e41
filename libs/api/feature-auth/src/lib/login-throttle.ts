/** Slows password guessing: after `maxFailures` failed sign-ins a user name is locked for `lockSeconds`. */
export class LoginThrottle {
  private readonly failures = new Map<string, { count: number; lockedUntil: number }>();

  constructor(
    private readonly maxFailures = 5,
    private readonly lockSeconds = 60,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until `username` may try again, or 0. */
  lockedFor(username: string): number {
    const entry = this.failures.get(username);
    if (!entry || entry.lockedUntil <= this.now()) {
      return 0;
    }
    return Math.ceil((entry.lockedUntil - this.now()) / 1000);
  }

  recordFailure(username: string): void {
    const entry = this.failures.get(username) ?? { count: 0, lockedUntil: 0 };
    entry.count += 1;
    if (entry.count >= this.maxFailures) {
      entry.count = 0;
      entry.lockedUntil = this.now() + this.lockSeconds * 1000;
    }
    this.failures.set(username, entry);
  }

  recordSuccess(username: string): void {
    this.failures.delete(username);
  }
}
