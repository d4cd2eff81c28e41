/// <reference types="node" />
// Test-only entry point, run by Node: settle() needs a turn of Node's event loop (setImmediate).
import type { Clock } from '../lib/clock';

interface Sleeper {
  readonly wake: number;
  readonly resolve: () => void;
}

/** Lets pending promise chains run (fakes resolve through microtasks and setImmediate). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i += 1) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Virtual time. With `autoAdvance` (default), whenever everything is
 * waiting on `sleep`, time jumps to the earliest wake-up, so a test of a
 * 30-minute timeout runs in milliseconds and concurrent loops (sender,
 * heartbeat, step) see one consistent timeline.
 */
export class FakeClock implements Clock {
  /** Wall-clock origin; move it to simulate a skewed host clock. */
  wallOriginMs: number;
  private mono = 0;
  private sleepers: Sleeper[] = [];
  private ticking = false;
  private readonly sleepListeners = new Set<() => void>();

  constructor(
    start = '2026-12-01T00:00:00.000Z',
    private readonly autoAdvance = true,
  ) {
    this.wallOriginMs = Date.parse(start);
  }

  now(): number {
    return this.wallOriginMs + this.mono;
  }

  monotonic(): number {
    return this.mono;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const sleeper: Sleeper = {
        wake: this.mono + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((entry) => entry !== sleeper);
        sleeper.resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(sleeper);
      for (const listener of [...this.sleepListeners]) {
        listener();
      }
      this.tick();
    });
  }

  /** Moves time forward by `ms`, waking sleepers in order. */
  async advance(ms: number): Promise<void> {
    const target = this.mono + ms;
    for (;;) {
      await settle();
      const next = this.earliest();
      if (next === undefined || next.wake > target) {
        break;
      }
      this.mono = Math.max(this.mono, next.wake);
      this.wakeDue();
    }
    this.mono = target;
    await settle();
  }

  /** Moves time forward at once (as work that takes time would), waking sleepers that are due. */
  elapse(ms: number): void {
    this.mono += ms;
    this.wakeDue();
  }

  /**
   * Resolves once at least `count` sleeps are pending: with one sleep per
   * loop under test, every loop has finished its work (its requests
   * answered) and waits for time to pass. Tests of loops that do real I/O
   * use this instead of auto-advance, which cannot tell a loop waiting for
   * a socket from one that is idle.
   */
  sleeping(count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.sleepers.length >= count) {
          this.sleepListeners.delete(check);
          resolve();
        }
      };
      this.sleepListeners.add(check);
      check();
    });
  }

  /** Moves time to the earliest pending wake-up (if any) and wakes every sleeper due then; returns how far time moved. */
  wakeNext(): number {
    const next = this.earliest();
    if (next === undefined) {
      return 0;
    }
    const moved = Math.max(0, next.wake - this.mono);
    this.mono += moved;
    this.wakeDue();
    return moved;
  }

  /**
   * Lets `ms` of virtual time pass, one wake-up at a time, each only once `loops` sleeps are
   * pending again (every loop under test finished its I/O): time moves in the loops' own steps,
   * so a slow machine makes a test slower, never different.
   */
  async passTime(ms: number, loops: number): Promise<void> {
    const until = this.mono + ms;
    await this.sleeping(loops);
    while (this.mono < until) {
      this.wakeNext();
      await this.sleeping(loops);
    }
  }

  /**
   * Moves virtual time as {@link passTime} does until `done` holds (a check, or a promise that
   * settles, its rejection passed on); throws when `limitMs` of virtual time did not do it. With a promise, the wait for
   * the loops to sleep again also ends when it settles: loops that have finished never sleep again.
   */
  async passTimeUntil(done: (() => boolean) | Promise<unknown>, loops: number, limitMs: number, what = 'condition'): Promise<void> {
    let ended = false;
    const settled = typeof done === 'function' ? undefined : done.then(() => void (ended = true), () => void (ended = true));
    const check = typeof done === 'function' ? done : () => ended;
    const endedOrSleeping = () => (settled === undefined ? this.sleeping(loops) : Promise.race([this.sleeping(loops), settled]));
    const until = this.mono + limitMs;
    await endedOrSleeping();
    while (!check()) {
      if (this.mono > until) {
        throw new Error(`${what}: not within ${limitMs} ms of virtual time`);
      }
      this.wakeNext();
      await endedOrSleeping();
    }
    if (typeof done !== 'function') {
      await done;
    }
  }

  /** How many sleeps are pending. */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  private earliest(): Sleeper | undefined {
    return [...this.sleepers].sort((a, b) => a.wake - b.wake)[0];
  }

  private wakeDue(): void {
    const due = this.sleepers.filter((entry) => entry.wake <= this.mono);
    this.sleepers = this.sleepers.filter((entry) => entry.wake > this.mono);
    for (const sleeper of due) {
      sleeper.resolve();
    }
  }

  private tick(): void {
    if (!this.autoAdvance || this.ticking) {
      return;
    }
    this.ticking = true;
    void (async () => {
      await settle();
      this.ticking = false;
      const next = this.earliest();
      if (next !== undefined) {
        this.mono = Math.max(this.mono, next.wake);
        this.wakeDue();
        this.tick();
      }
    })();
  }
}
