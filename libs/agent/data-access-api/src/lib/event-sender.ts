import { Backoff, EVENT_BACKOFF, type BackoffPolicy, type Clock, type JsonObject, type Logger } from '@ccos/agent/util-host';
import type { ApiClient } from './api-client';
import { ApiError, isRunFinished, isUnauthenticated } from './api-errors';
import type { StepEvent, StepEventInput } from './operations';
import type { Spool } from './spool';

export interface EventSenderOptions {
  readonly spool: Spool;
  readonly api: ApiClient;
  readonly clock: Clock;
  readonly log: Logger;
  readonly backoff?: BackoffPolicy;
  readonly random?: () => number;
  /** The service answered `cancelRequested: true`. */
  readonly onCancelRequested?: () => void;
  /** The token was refused: the run is over on the service's side. */
  readonly onUnauthenticated?: () => void;
  /** The service said the run has ended (RUN_FINISHED): it takes no more events. */
  readonly onRunFinished?: () => void;
}

export type DrainOutcome = 'drained' | 'timeout' | 'unauthenticated' | 'finished';

/** The key of a stand-in's detail: it says why the original detail is missing. */
export const REFUSED_DETAIL_KEY = 'detailRefused';

const MAX_STAND_IN_MESSAGE = 1000;
const MAX_KEPT_FIELD = 500;

/** The event as sent again after the service refused it: same place in the run, the detail replaced by why it is missing. */
function standInFor(event: StepEvent, refusal: ApiError): StepEvent {
  const kept: JsonObject = {};
  // A failure's code and hint are what the console shows first; keep them when they are small.
  for (const key of ['code', 'hint']) {
    const value = event.detail?.[key];
    if (typeof value === 'string' && value.length <= MAX_KEPT_FIELD) {
      kept[key] = value;
    }
  }
  const message = event.message ?? null;
  return {
    ...event,
    message: message !== null && message.length > MAX_STAND_IN_MESSAGE ? `${message.slice(0, MAX_STAND_IN_MESSAGE)}…` : message,
    detail: { ...kept, [REFUSED_DETAIL_KEY]: `the service refused this event (${refusal.code}: ${refusal.message.slice(0, MAX_KEPT_FIELD)}); it was sent again without its detail` },
  };
}

function isStandIn(event: StepEvent): boolean {
  return typeof event.detail?.[REFUSED_DETAIL_KEY] === 'string';
}

/**
 * Most events, and most bytes of them as JSON, sent in one request: well inside the 64 KiB an
 * agent's request may carry (a single event's detail may take 48 KiB: such an event goes alone).
 */
export const MAX_BATCH_EVENTS = 50;
export const MAX_BATCH_BYTES = 32 * 1024;

/** What a service from before batches answers to one: it does not know the operation. */
const BATCHES_UNKNOWN = new Set(['GRAPHQL_VALIDATION_FAILED', 'NOT_FOUND', 'HTTP_404']);

/** The oldest undelivered events that fit in one request (at least the oldest). */
function batchOf(undelivered: readonly StepEvent[]): StepEvent[] {
  const batch: StepEvent[] = [];
  // As a JSON array: brackets, and a comma before every event but the first.
  let bytes = 1;
  for (const event of undelivered) {
    const size = Buffer.byteLength(JSON.stringify(event), 'utf8') + 1;
    if (batch.length > 0 && (batch.length >= MAX_BATCH_EVENTS || bytes + size > MAX_BATCH_BYTES)) {
      break;
    }
    batch.push(event);
    bytes += size;
  }
  return batch;
}

function describe(batch: readonly StepEvent[]): string {
  return batch.length === 1 ? `event ${batch[0].seq}` : `events ${batch[0].seq}–${batch[batch.length - 1].seq}`;
}

/**
 * Delivers spooled events to the service in sequence order, what has piled
 * up as one batch (MAX_BATCH_EVENTS, MAX_BATCH_BYTES), for as long as it takes: while the service is unreachable it
 * retries with capped exponential backoff and jitter (0.5 s → 30 s). It
 * stops only when the token is refused, the service says the run has ended
 * (RUN_FINISHED: what is still spooled is marked refused, never sent again),
 * or it is told to.
 *
 * An event the service refuses (too large, over the run's limit, invalid)
 * is not retried as it is: it goes again at once as a stand-in without its
 * detail (saying why), so the run's history keeps the step's outcome; a
 * refused stand-in is dropped, noted in the spool and the log.
 */
export class EventSender {
  private readonly backoff: Backoff;
  private readonly stopper = new AbortController();
  private wakeUp: (() => void) | null = null;
  private listeners: (() => void)[] = [];
  private loopDone: Promise<void> | null = null;
  private nudge: AbortController | null = null;
  private failing = false;
  private unauth = false;
  private over = false;
  /** Whether the service takes batches (`reportSteps`); a service from before them does not. */
  private batches = true;
  /** Send the oldest event alone next (a batch holding it was refused). */
  private oneNext = false;

  constructor(private readonly options: EventSenderOptions) {
    this.backoff = new Backoff(options.backoff ?? EVENT_BACKOFF, options.random);
  }

  /** Starts delivering (events left undelivered by an earlier agent go first). */
  start(): void {
    this.loopDone ??= this.loop();
  }

  /**
   * Stamps, spools (fsynced) and queues an event; resolves once it is on disk. A PROGRESS
   * event takes the place of a waiting PROGRESS of its step that says the same coded message
   * (e.g. "downloading file n of m": only its numbers differ) while that one still waits behind
   * another: it says where the step is now, so when the service is slow to take events (many
   * hosts at once) it hears the latest, not a backlog that grows the slower it gets. Any other
   * message (a warning, a resumed download, a new phase) keeps its own event.
   */
  async report(input: StepEventInput): Promise<StepEvent> {
    const event = {
      step: input.step,
      status: input.status,
      progress: input.progress ?? null,
      message: input.message ?? null,
      ...(input.messageCode ? { messageCode: input.messageCode, messageParams: input.messageParams ?? {} } : {}),
      detail: input.detail ?? null,
      occurredAt: new Date(this.options.clock.now()).toISOString(),
    };
    const spooled = input.status === 'PROGRESS'
      ? await this.options.spool.appendOrSupersede(event, (newest) => newest.status === 'PROGRESS' && newest.step === input.step && input.messageCode !== undefined && newest.messageCode === input.messageCode && !isStandIn(newest))
      : await this.options.spool.append(event);
    if (this.over) {
      // Kept on disk for the record, never sent: the service takes nothing more for this run.
      await this.options.spool.markRejected(spooled.seq, 'the run had ended on the service', new Date(this.options.clock.now()));
    }
    this.wakeUp?.();
    return spooled;
  }

  /** Events spooled but not yet delivered. */
  get pendingCount(): number {
    return this.options.spool.undelivered().length;
  }

  get unauthenticated(): boolean {
    return this.unauth;
  }

  /** The service said the run has ended: nothing more is sent. */
  get runFinished(): boolean {
    return this.over;
  }

  /** Waits until every spooled event is delivered, the token is refused, the run is said to have ended, or `timeoutMs` passes. */
  async drain(timeoutMs: number): Promise<DrainOutcome> {
    const { clock } = this.options;
    const deadline = clock.monotonic() + timeoutMs;
    for (;;) {
      if (this.unauth) {
        return 'unauthenticated';
      }
      if (this.over) {
        return 'finished';
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
    const { spool, clock, log } = this.options;
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
      const batch = this.batches && !this.oneNext ? batchOf(spool.undelivered()) : [next];
      this.oneNext = false;
      spool.sending(batch[batch.length - 1].seq);
      try {
        const result = await this.deliver(batch, signal);
        await spool.markDeliveredAll(batch.map((event) => ({ seq: event.seq, duplicate: result.duplicates.has(event.seq) })), new Date(clock.now()));
        if (this.failing) {
          log.info(`service reachable again; ${describe(batch)} delivered`);
        }
        if (!result.accepted) {
          log.warn(`service did not accept event ${next.seq} (${next.step} ${next.status}); not sending it again`);
        }
        this.failing = false;
        this.backoff.reset();
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
        if (isRunFinished(error)) {
          // Final: a later attempt, or a later start of this agent, would be refused the same way.
          // Set first: an event spooled from now on marks itself (report), the rest are marked here.
          this.over = true;
          const left = spool.undelivered();
          log.warn(`the service says the run has ended (${(error as Error).message}); ${left.length} event(s) not sent, no more are sent`);
          for (const event of left) {
            await spool.markRejected(event.seq, `the run had ended: ${(error as Error).message}`, new Date(clock.now()));
          }
          this.notify();
          this.options.onRunFinished?.();
          return;
        }
        if (error instanceof ApiError && error.kind === 'rejected' && batch.length > 1) {
          // One of them is refused (or the service takes no batches): the first goes alone, where a refusal is handled.
          if (BATCHES_UNKNOWN.has(error.code)) {
            this.batches = false;
            log.info(`the service takes no batches of events (${error.message}); sending them one at a time`);
          } else {
            log.warn(`service refused ${describe(batch)} (${error.message}); sending event ${next.seq} alone`);
          }
          this.oneNext = true;
          continue;
        }
        if (error instanceof ApiError && error.kind === 'rejected') {
          if (isStandIn(next)) {
            log.error(`service refused event ${next.seq} (${next.step} ${next.status}) again without its detail (${error.message}); dropped, noted in the spool`);
            await spool.markRejected(next.seq, error.message, new Date(clock.now()));
            this.notify();
            continue;
          }
          log.warn(`service refused event ${next.seq} (${next.step} ${next.status}): ${error.message}; sending it again without its detail`);
          await spool.replace(standInFor(next, error));
          continue;
        }
        const delay = this.backoff.next();
        log.warn(`${describe(batch)} not delivered (${(error as Error).message}); ${this.pendingCount} pending, retrying in ${(delay / 1000).toFixed(1)} s`);
        this.failing = true;
        this.nudge = new AbortController();
        await clock.sleep(delay, AbortSignal.any([signal, this.nudge.signal]));
        this.nudge = null;
      }
    }
  }

  /** Sends one event alone, several as a batch. */
  private async deliver(batch: readonly StepEvent[], signal: AbortSignal): Promise<{ accepted: boolean; duplicates: ReadonlySet<number>; cancelRequested: boolean }> {
    const { api } = this.options;
    if (batch.length === 1) {
      const result = await api.reportStep(batch[0], signal);
      return { accepted: result.accepted, duplicates: new Set(result.duplicate ? [batch[0].seq] : []), cancelRequested: result.cancelRequested };
    }
    const result = await api.reportSteps(batch, signal);
    return { accepted: true, duplicates: new Set(result.duplicateSeqs), cancelRequested: result.cancelRequested };
  }
}
