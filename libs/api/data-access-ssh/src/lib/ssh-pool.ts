import { openSshSession, type SshConnectOptions } from './ssh-connect';
import type { SshSession } from './ssh-session';
import { describeEndpoint, type SshTarget } from './ssh-target';

/** Options of {@link SshPool}. */
export interface SshPoolOptions {
  /** Sessions open (or opening) at once across all hosts (default 10). */
  readonly maxSessions?: number;
  /** Run one task per host at a time (default true): two installs racing on one host help nobody. */
  readonly serializePerHost?: boolean;
  /** Timeouts and keep-alive for every session. */
  readonly connect?: SshConnectOptions;
  /** Opens a session (default {@link openSshSession}); tests pass a fake. */
  readonly open?: (target: SshTarget, options: SshConnectOptions) => Promise<SshSession>;
}

/** What the pool is doing. */
export interface SshPoolStats {
  readonly active: number;
  readonly queued: number;
  /** Most sessions that were ever active at once. */
  readonly peak: number;
}

/** Default of {@link SshPoolOptions.maxSessions}. */
export const DEFAULT_MAX_SESSIONS = 10;

interface Waiter {
  readonly key: string;
  readonly start: () => void;
  readonly reject: (reason: unknown) => void;
}

/**
 * Bounds how many SSH sessions the service holds at once when it works on
 * many hosts (a 50-node scale-out must not open 50 connections and 50
 * 90 MB uploads together). Tasks queue in arrival order; a task whose host
 * is busy is skipped over, not waited behind, so one slow host never blocks
 * the others. Each task gets a fresh session, closed when the task settles.
 */
export class SshPool {
  readonly #max: number;
  readonly #serialize: boolean;
  readonly #connect: SshConnectOptions;
  readonly #open: (target: SshTarget, options: SshConnectOptions) => Promise<SshSession>;
  readonly #queue: Waiter[] = [];
  readonly #busyHosts = new Set<string>();
  readonly #idleWaiters: (() => void)[] = [];
  #active = 0;
  #peak = 0;
  #closed = false;

  constructor(options: SshPoolOptions = {}) {
    const max = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`maxSessions must be a positive integer, got ${max}`);
    }
    this.#max = max;
    this.#serialize = options.serializePerHost ?? true;
    this.#connect = options.connect ?? {};
    this.#open = options.open ?? openSshSession;
  }

  get stats(): SshPoolStats {
    return { active: this.#active, queued: this.#queue.length, peak: this.#peak };
  }

  /**
   * Waits for a slot (and for the host to be free), opens a session, runs
   * `task` with it and closes it. Connection failures reject with the
   * {@link SshError} of `openSshSession`; an abort while queued rejects with
   * the signal's reason.
   */
  async run<T>(target: SshTarget, task: (session: SshSession) => Promise<T>, options: { readonly signal?: AbortSignal } = {}): Promise<T> {
    const key = describeEndpoint(target).toLowerCase();
    await this.#acquire(key, options.signal);
    try {
      const session = await this.#open(target, this.#connect);
      try {
        return await task(session);
      } finally {
        await session.close();
      }
    } finally {
      this.#release(key);
    }
  }

  /** Refuses new tasks, drops queued ones (they reject) and waits for running ones. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#queue.splice(0)) {
      waiter.reject(new Error('the SSH pool was closed'));
    }
    if (this.#active > 0) {
      await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    }
  }

  #acquire(key: string, signal: AbortSignal | undefined): Promise<void> {
    if (this.#closed) {
      return Promise.reject(new Error('the SSH pool was closed'));
    }
    if (signal?.aborted === true) {
      return Promise.reject(signal.reason);
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) {
          this.#queue.splice(index, 1);
          reject(signal?.reason);
        }
      };
      const waiter: Waiter = {
        key,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (reason) => {
          signal?.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#dispatch();
    });
  }

  #release(key: string): void {
    this.#active -= 1;
    this.#busyHosts.delete(key);
    if (this.#active === 0) {
      for (const resolve of this.#idleWaiters.splice(0)) {
        resolve();
      }
    }
    this.#dispatch();
  }

  #dispatch(): void {
    for (let index = 0; index < this.#queue.length && this.#active < this.#max;) {
      const waiter = this.#queue[index];
      if (waiter === undefined || (this.#serialize && this.#busyHosts.has(waiter.key))) {
        index += 1;
        continue;
      }
      this.#queue.splice(index, 1);
      this.#active += 1;
      this.#peak = Math.max(this.#peak, this.#active);
      if (this.#serialize) {
        this.#busyHosts.add(waiter.key);
      }
      waiter.start();
    }
  }
}
