import type { Logger } from 'pino';
import type { RemovalRunEntity, RemovalRunStore } from '@ccos/api/data-access-db';
import { type EventBus, type RemovalProgressPayload, TOPICS } from '@ccos/api/util-graphql';
import type { RemovalEventKind, RemovalPhase } from '@ccos/shared/domain';
import { bare, type CodedText } from '@ccos/shared/messages';

/** An event to record. */
export interface RemovalEventInput {
  readonly kind: RemovalEventKind;
  /** A coded message of the catalogue (kubectl's own words go in as its data parameters). */
  readonly message: CodedText;
  readonly pod?: string | null;
  readonly pdb?: string | null;
  readonly detail?: Record<string, unknown> | null;
  /** The phase to tag it with, when not the run's phase now (a closing event takes the phase the run ends in). */
  readonly phase?: RemovalPhase;
}

/**
 * The events of one run, in the order they happen. `add` returns at once; the events are
 * written in batches (a 300-pod drain makes hundreds), numbered by the store after the run's
 * last event, and each batch is published on REMOVAL_PROGRESS once stored, so a subscriber that
 * hears of seq n can read everything up to n.
 */
export class RunEventWriter {
  private queue: Array<RemovalEventInput & { phase: RemovalPhase; occurredAt: Date }> = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly run: RemovalRunEntity,
    private seq: number,
    private readonly store: RemovalRunStore,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly phaseNow: () => RemovalPhase,
  ) {}

  /** The sequence number of the last event stored. */
  get lastSeq(): number {
    return this.seq;
  }

  /** Records the event with the run's phase now: it may be stored only after the run moved on. */
  add(event: RemovalEventInput): void {
    this.queue.push({ ...event, phase: event.phase ?? this.phaseNow(), occurredAt: new Date() });
    this.writing ??= this.write();
  }

  /** Resolves once every event added so far is stored and published. */
  async flush(): Promise<void> {
    while (this.writing) {
      await this.writing;
    }
  }

  /** Tells subscribers the run changed (status, phase) without a new event. */
  announce(): void {
    publishProgress(this.bus, this.run, this.seq);
  }

  private async write(): Promise<void> {
    // Let the events of the same tick gather into one INSERT.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        const seqs = await this.store.events.appendNext(
          this.run.id,
          batch.map((event) => ({
            kind: event.kind,
            phase: event.phase,
            pod: event.pod ?? null,
            pdb: event.pdb ?? null,
            message: event.message.message,
            messageCoded: bare(event.message),
            detail: event.detail ?? null,
            occurredAt: event.occurredAt,
          })),
        );
        this.seq = seqs.at(-1) ?? this.seq;
      } catch (error) {
        this.logger.error({ err: error, runId: this.run.id, events: batch.length }, 'could not store removal events');
      }
      publishProgress(this.bus, this.run, this.seq);
    }
    this.writing = null;
  }
}

function publishProgress(bus: EventBus, run: RemovalRunEntity, seq: number): void {
  const payload: RemovalProgressPayload = { nodeId: run.nodeId, removalId: run.id, seq };
  bus.publish(TOPICS.REMOVAL_PROGRESS, run.nodeId, payload);
}

/** Writes removal events and tells subscribers of them. */
export class RemovalLog {
  constructor(
    private readonly store: RemovalRunStore,
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  /**
   * A writer continuing after the run's last stored event; each event gets the phase `phaseNow`
   * says when it is added (the executor's view of the run, which moves on; the run as it was by default).
   */
  async writer(run: RemovalRunEntity, phaseNow: () => RemovalPhase = () => run.phase): Promise<RunEventWriter> {
    return new RunEventWriter(run, await this.store.events.lastSeq(run.id), this.store, this.bus, this.logger, phaseNow);
  }

  /** Tells subscribers a run changed. */
  announce(run: RemovalRunEntity, seq: number): void {
    publishProgress(this.bus, run, seq);
  }
}
