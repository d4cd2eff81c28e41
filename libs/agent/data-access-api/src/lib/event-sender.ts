import { Backoff, EVENT_BACKOFF, type BackoffPolicy, type Clock, type Logger } from '@ccos/agent/util-host';
import { ApiError, isUnauthenticated } from './api-errors';
import type { ApiClient } from './api-client';
import type { StepEvent, StepEventInput } from './operations';
import type { Spool } from './spool';

export interface EventSenderOptions {
  readonly spool: Spool;
  readonly api: ApiClient;
  readonly clock: Clock;
  readonly log: Logger;
  readonly backoff?: BackoffPolicy;
  readonly random?: () => number;
  /** Attempts before an event the service refuses (not UNAUTHENTICATED) is set aside (default 3). */
  readonly maxRejections?: number;
  /** The service answered `cancelRequested: true`. */
  readonly onCancelRequested?: () => void;
  /** The token was refused: the run is over on the service's side. */
  readonly onUnauthenticated?: () => void;
}

export type DrainOutcome = 'drained' | 'timeout' | 'unauthenticated';

/**
 * Delivers spooled events to the service, one at a time and in sequence
 * order, for as long as it takes: while the service is unreachable it
 * retries with capped exponential backoff and jitter (0.5 s → 30 s). It
 * stops only when the token is refused or it is told to.
 */
export class EventSender {
  private readonly backoff: Backoff;
  private readonly stopper = new AbortController();
  private wakeUp: (() => void) | null = null;
  private listeners: (() => void)[] = [];
  private loopDone: Promise<void> | null = null;
  private nudge: AbortController | null = null;
  private rejectedAttempts = 0;
  private failing = false;
  private unauth = false;

  constructor(private readonly options: EventSenderOptions) {
    this.backoff = new Backoff(options.backoff ?? EVENT_BACKOFF, options.random);
  }

  /** Starts delivering (events left undelivered by an earlier agent go first). */
  start(): void {
    this.loopDone ??= this.loop();
  }

  /** Stamps, spools (fsynced) and queues an event; resolves once it is on disk. */
  async report(input: StepEventInput): Promise<StepEvent> {
    const event = await this.options.spool.append({
      step: input.step,
      status: input.status,
      progress: input.progress ?? null,
      message: input.message ?? null,
      detail: input.detail ?? null,
      occurredAt: new Date(this.options.clock.now()).toISOString(),
    });
    this.wakeUp?.();
    return event;
  }

  /** Events spooled but not yet delivered. */
  get pendingCount(): number {
    return this.options.spool.undelivered().length;
  }

  get unauthenticated(): boolean {
    return this.unauth;
  }

  /** Waits until every spooled event is delivered, the token is refused, or `timeoutMs` passes. */
  async drain(timeoutMs: number): Promise<DrainOutcome> {
    const { clock } = this.options;
    const deadline = clock.monotonic() + timeoutMs;
    for (;;) {
      if (this.unauth) {
        return 'unauthenticated';
      }
      if (this.pendingCount === 0) {
        return 'drained';
      }
      const remaining = deadline - clock.monotonic();
      if (remaining <= 0) {
        return 'timeout';
      }
      const changed = new AbortController();
      this.listeners.push(() => changed.abort());
      await clock.sleep(Math.min(remaining, 1_000), changed.signal);
    }
  }

  /** Cuts a backoff wait short and starts the delays over (a last flush before exiting). */
  retryNow(): void {
    this.backoff.reset();
    this.nudge?.abort();
  }

  /** Stops after the attempt in flight. */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.wakeUp?.();
    await this.loopDone;
  }

  private notify(): void {
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) {
      listener();
    }
  }

  private async loop(): Promise<void> {
    const { spool, api, clock, log } = this.options;
    const signal = this.stopper.signal;
    while (!signal.aborted) {
      const next = spool.undelivered()[0];
      if (next === undefined) {
        await new Promise<void>((resolve) => {
          this.wakeUp = resolve;
        });
        this.wakeUp = null;
        continue;
      }
      try {
        const result = await api.reportStep(next, signal);
        await spool.markDelivered(next.seq, result.duplicate, new Date(clock.now()));
        if (this.failing) {
          log.info(`service reachable again; event ${next.seq} delivered`);
        }
        if (!result.accepted) {
          log.warn(`service did not accept event ${next.seq} (${next.step} ${next.status}); not sending it again`);
        }
        this.failing = false;
        this.backoff.reset();
        this.rejectedAttempts = 0;
        this.notify();
        if (result.cancelRequested) {
          this.options.onCancelRequested?.();
        }
      } catch (error) {
        if (signal.aborted) {
          break;
        }
        if (isUnauthenticated(error)) {
          log.error(`the service refused the run token (${(error as Error).message}); the run is over, no more events are sent`);
          this.unauth = true;
          this.notify();
          this.options.onUnauthenticated?.();
          return;
        }
        if (error instanceof ApiError && error.kind === 'rejected') {
          this.rejectedAttempts += 1;
          if (this.rejectedAttempts >= (this.options.maxRejections ?? 3)) {
            log.error(`service refused event ${next.seq} ${this.rejectedAttempts} times (${error.message}); setting it aside`);
            await spool.markRejected(next.seq, error.message, new Date(clock.now()));
            this.rejectedAttempts = 0;
            this.notify();
            continue;
          }
        }
        const delay = this.backoff.next();
        log.warn(`event ${next.seq} not delivered (${(error as Error).message}); ${this.pendingCount} pending, retrying in ${(delay / 1000).toFixed(1)} s`);
        this.failing = true;
        this.nudge = new AbortController();
        await clock.sleep(delay, AbortSignal.any([signal, this.nudge.signal]));
        this.nudge = null;
      }
    }
  }
}
