/** How many password checks (each a 64 MiB scrypt) one process runs at once, and how many wait. */
export interface PasswordCheckLimits {
  /** Checks running at once. */
  readonly concurrent: number;
  /** Attempts waiting for a free slot; beyond that they are refused at once. */
  readonly queued: number;
  /** How long an attempt waits for a slot before it is refused … */
  readonly maxWaitMs: number;
  /** … and one of a known pair, which only waits behind other known pairs. */
  readonly knownMaxWaitMs: number;
  /** Attempts from one address running or waiting at once, so one address cannot fill the queue. */
  readonly perAddress: number;
}

export const DEFAULT_PASSWORD_CHECK_LIMITS: PasswordCheckLimits = { concurrent: 2, queued: 16, maxWaitMs: 3_000, knownMaxWaitMs: 10_000, perAddress: 2 };

/** Why no slot was given: the queue, or this address's share of it, is full, or the wait ran out. */
export class NoPasswordCheckSlot extends Error {
  constructor(readonly reason: 'QUEUE_FULL' | 'ADDRESS_FULL' | 'TIMED_OUT') {
    super(`no password check slot (${reason})`);
    this.name = 'NoPasswordCheckSlot';
  }
}

interface Waiter {
  readonly known: boolean;
  readonly grant: () => void;
  readonly refuse: (reason: NoPasswordCheckSlot) => void;
}

/**
 * A semaphore for password checks. Bounded in every direction: checks in flight, attempts
 * waiting, how long they wait, and one address's share; its memory is at most one entry per
 * attempt in flight or waiting. Attempts of a known pair (a user name that signed in from
 * that address before) go first and may push the newest unknown waiter out of a full queue,
 * so a flood of guesses from elsewhere cannot keep a user from signing in where they usually do.
 */
export class PasswordCheckSlots {
  private running = 0;
  private peak = 0;
  private readonly waiting: Waiter[] = [];
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly limits: PasswordCheckLimits = DEFAULT_PASSWORD_CHECK_LIMITS) {}

  /** Checks running and waiting now, and the most that ever ran at once (for metrics and benchmarks). */
  get stats(): { readonly running: number; readonly waiting: number; readonly peak: number } {
    return { running: this.running, waiting: this.waiting.length, peak: this.peak };
  }

  /** Runs `check` in a slot, waiting briefly for one; throws NoPasswordCheckSlot when none comes. */
  async run<T>(address: string, check: () => Promise<T>, known = false): Promise<T> {
    const fromAddress = this.byAddress.get(address) ?? 0;
    if (fromAddress >= this.limits.perAddress && !known) {
      throw new NoPasswordCheckSlot('ADDRESS_FULL');
    }
    this.byAddress.set(address, fromAddress + 1);
    try {
      await this.acquire(known);
      try {
        return await check();
      } finally {
        this.release();
      }
    } finally {
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) {
        this.byAddress.set(address, left);
      } else {
        this.byAddress.delete(address);
      }
    }
  }

  private acquire(known: boolean): Promise<void> {
    if (this.running < this.limits.concurrent) {
      this.take();
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.queued) {
      const newestUnknown = known ? this.waiting.findLastIndex((waiter) => !waiter.known) : -1;
      if (newestUnknown < 0) {
        return Promise.reject(new NoPasswordCheckSlot('QUEUE_FULL'));
      }
      this.waiting.splice(newestUnknown, 1)[0]?.refuse(new NoPasswordCheckSlot('QUEUE_FULL'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(new NoPasswordCheckSlot('TIMED_OUT'));
      }, known ? this.limits.knownMaxWaitMs : this.limits.maxWaitMs);
      const waiter: Waiter = {
        known,
        grant: () => {
          clearTimeout(timer);
          this.take();
          resolve();
        },
        refuse: (reason) => {
          clearTimeout(timer);
          reject(reason);
        },
      };
      // Known pairs queue behind each other, ahead of every unknown one.
      const firstUnknown = known ? this.waiting.findIndex((other) => !other.known) : -1;
      this.waiting.splice(firstUnknown < 0 ? this.waiting.length : firstUnknown, 0, waiter);
    });
  }

  private take(): void {
    this.running += 1;
    this.peak = Math.max(this.peak, this.running);
  }

  private release(): void {
    this.running -= 1;
    this.waiting.shift()?.grant();
  }
}
