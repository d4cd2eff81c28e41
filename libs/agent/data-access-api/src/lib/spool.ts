import { isJsonObject, type FileSystem, type Logger } from '@ccos/agent/util-host';
import { isInstallStep, STEP_EVENT_STATUSES, type StepEventStatus } from '@ccos/shared/domain';
import type { StepEvent } from './operations';

/** One line of the spool file. */
type SpoolLine =
  | { readonly type: 'event'; readonly event: StepEvent }
  | { readonly type: 'ack'; readonly seq: number; readonly duplicate: boolean; readonly at: string }
  | { readonly type: 'rejected'; readonly seq: number; readonly error: string; readonly at: string };

/**
 * The agent's outbox: every event is appended to `spool.jsonl` and fsynced
 * before anyone tries to send it, and every delivery is recorded after it,
 * so an agent that is killed and started again with the same config sends
 * what was not delivered and numbers new events after the highest
 * sequence number it ever spooled.
 */
export class Spool {
  private lastSeq: number;
  private readonly pending: StepEvent[];
  /** The highest seq a sender has taken on its way (sent, answer not yet recorded). */
  private onTheWayUpTo = 0;
  private chain: Promise<void> = Promise.resolve();

  private constructor(
    private readonly fs: FileSystem,
    private readonly log: Logger,
    readonly path: string,
    readonly runId: string,
    lastSeq: number,
    pending: StepEvent[],
  ) {
    this.lastSeq = lastSeq;
    this.pending = pending;
  }

  /** Opens (or creates) the spool of a run. A torn last line (crash mid-write) is skipped. */
  static async open(fs: FileSystem, path: string, runId: string, log: Logger): Promise<Spool> {
    let text = '';
    try {
      text = (await fs.readFile(path)).toString('utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw error;
      }
    }
    const events = new Map<number, StepEvent>();
    const done = new Set<number>();
    let lastSeq = 0;
    let skipped = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') {
        continue;
      }
      const entry = parseLine(line);
      if (entry === null) {
        skipped += 1;
        continue;
      }
      if (entry.type === 'event') {
        if (entry.event.runId !== runId) {
          skipped += 1;
          continue;
        }
        events.set(entry.event.seq, entry.event);
        lastSeq = Math.max(lastSeq, entry.event.seq);
      } else {
        done.add(entry.seq);
      }
    }
    if (skipped > 0) {
      log.warn(`spool ${path}: skipped ${skipped} unreadable or foreign line(s)`);
    }
    if (text.length > 0 && !text.endsWith('\n')) {
      // Finish a torn line so the next record starts on its own line.
      await fs.appendFile(path, '\n', { sync: true });
    }
    const pending = [...events.values()].filter((event) => !done.has(event.seq)).sort((a, b) => a.seq - b.seq);
    return new Spool(fs, log, path, runId, lastSeq, pending);
  }

  /** The highest sequence number spooled so far (0 for a new run). */
  get highestSeq(): number {
    return this.lastSeq;
  }

  /** Undelivered events, oldest first. */
  undelivered(): readonly StepEvent[] {
    return this.pending;
  }

  /** Numbers, stores (fsynced) and queues an event. */
  append(event: Omit<StepEvent, 'seq' | 'runId'>): Promise<StepEvent> {
    return this.serial(() => this.appendNow(event));
  }

  /**
   * Like {@link append}, but when the newest undelivered event is one `supersedes` accepts and
   * neither the oldest nor one a sender has on its way ({@link sending}), stores the event under
   * that one's sequence number instead: it then goes out in its place, once.
   */
  appendOrSupersede(event: Omit<StepEvent, 'seq' | 'runId'>, supersedes: (newest: StepEvent) => boolean): Promise<StepEvent> {
    return this.serial(async () => {
      const newest = this.pending.at(-1);
      if (this.pending.length < 2 || newest === undefined || newest.seq <= this.onTheWayUpTo || !supersedes(newest)) {
        return this.appendNow(event);
      }
      const newer: StepEvent = { runId: this.runId, seq: newest.seq, ...event };
      await this.write({ type: 'event', event: newer }, `event ${newer.seq} again`);
      this.pending[this.pending.length - 1] = newer;
      return newer;
    });
  }

  /**
   * Stores (fsynced) a new version of an undelivered event, under the same sequence number;
   * it is what is sent from now on, also by an agent started again (the last version wins).
   */
  replace(event: StepEvent): Promise<void> {
    return this.serial(async () => {
      await this.write({ type: 'event', event }, `event ${event.seq} again`);
      const index = this.pending.findIndex((entry) => entry.seq === event.seq);
      if (index >= 0) {
        this.pending[index] = event;
      }
    });
  }

  /** A sender takes the undelivered events up to `seq` on their way: none of them is superseded from now on. */
  sending(seq: number): void {
    this.onTheWayUpTo = Math.max(this.onTheWayUpTo, seq);
  }

  /** Records the delivery of several events at once (one fsync). */
  markDeliveredAll(deliveries: ReadonlyArray<{ readonly seq: number; readonly duplicate: boolean }>, at: Date): Promise<void> {
    return this.serial(async () => {
      await this.writeAll(deliveries.map(({ seq, duplicate }) => ({ type: 'ack', seq, duplicate, at: at.toISOString() })), `delivery of ${deliveries.length} events`);
      for (const { seq } of deliveries) {
        this.drop(seq);
      }
    });
  }

  markDelivered(seq: number, duplicate: boolean, at: Date): Promise<void> {
    return this.serial(async () => {
      await this.write({ type: 'ack', seq, duplicate, at: at.toISOString() }, `delivery of ${seq}`);
      this.drop(seq);
    });
  }

  /** The service refused the event for good; it is kept in the file but not sent again. */
  markRejected(seq: number, error: string, at: Date): Promise<void> {
    return this.serial(async () => {
      await this.write({ type: 'rejected', seq, error, at: at.toISOString() }, `rejection of ${seq}`);
      this.drop(seq);
    });
  }

  private async appendNow(event: Omit<StepEvent, 'seq' | 'runId'>): Promise<StepEvent> {
    const spooled: StepEvent = { runId: this.runId, seq: this.lastSeq + 1, ...event };
    await this.write({ type: 'event', event: spooled }, `event ${spooled.seq}`);
    this.lastSeq = spooled.seq;
    this.pending.push(spooled);
    return spooled;
  }

  /** Runs writes one at a time, in call order, so sequence numbers and file order agree. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.then(() => undefined, () => undefined);
    return run;
  }

  private drop(seq: number): void {
    const index = this.pending.findIndex((event) => event.seq === seq);
    if (index >= 0) {
      this.pending.splice(index, 1);
    }
  }

  private write(line: SpoolLine, what: string): Promise<void> {
    return this.writeAll([line], what);
  }

  /**
   * Appends records. A failed write (full disk) is logged, not thrown:
   * the event still goes out from memory, only its durability is lost.
   */
  private async writeAll(lines: readonly SpoolLine[], what: string): Promise<void> {
    try {
      await this.fs.appendFile(this.path, lines.map((line) => `${JSON.stringify(line)}\n`).join(''), { sync: true, mode: 0o600 });
    } catch (error) {
      this.log.error(`spool ${this.path}: could not record ${what}: ${(error as Error).message}`);
    }
  }
}

function parseLine(line: string): SpoolLine | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isJsonObject(value)) {
    return null;
  }
  if (value['type'] === 'event' && isJsonObject(value['event'])) {
    const event = value['event'];
    const seq = event['seq'];
    if (
      typeof seq === 'number' && Number.isSafeInteger(seq) && seq > 0 &&
      typeof event['runId'] === 'string' && typeof event['step'] === 'string' && isInstallStep(event['step']) &&
      typeof event['status'] === 'string' && (STEP_EVENT_STATUSES as readonly string[]).includes(event['status']) &&
      typeof event['occurredAt'] === 'string'
    ) {
      return {
        type: 'event',
        event: {
          runId: event['runId'],
          seq,
          step: event['step'],
          status: event['status'] as StepEventStatus,
          progress: typeof event['progress'] === 'number' ? event['progress'] : null,
          message: typeof event['message'] === 'string' ? event['message'] : null,
          ...(typeof event['messageCode'] === 'string' ? { messageCode: event['messageCode'], messageParams: isJsonObject(event['messageParams']) ? event['messageParams'] : {} } : {}),
          detail: isJsonObject(event['detail']) ? event['detail'] : null,
          occurredAt: event['occurredAt'],
        },
      };
    }
    return null;
  }
  if ((value['type'] === 'ack' || value['type'] === 'rejected') && typeof value['seq'] === 'number') {
    return value['type'] === 'ack'
      ? { type: 'ack', seq: value['seq'], duplicate: value['duplicate'] === true, at: String(value['at'] ?? '') }
      : { type: 'rejected', seq: value['seq'], error: String(value['error'] ?? ''), at: String(value['at'] ?? '') };
  }
  return null;
}
