import type { DataSource, EntityManager, EntityTarget, QueryDeepPartialEntity, Repository } from 'typeorm';
import type { RunEventColumns } from './entities/run-columns';
import { entityChanges } from './entity-changes';

/** An event's own fields: all but the row id, its run and its number (the log adds those). */
export type RunEventFields<Event extends RunEventColumns> = Omit<Event, 'id' | 'runId' | 'seq'>;

/** An event numbered by its writer. */
export type Numbered<New> = New & Pick<RunEventColumns, 'seq'>;

/**
 * The ordered events of runs in one table (`step_events`, `removal_events`). A log is numbered by
 * one side: by its writer, who sends `seq` and may send an event again ({@link append}: stored once
 * per run and seq), or by the log itself ({@link appendNext}: after the run's last event). `New`
 * is what a writer of this kind sends besides `seq` (columns with a default may be left out).
 */
export class RunEventLog<Event extends RunEventColumns, New extends Partial<RunEventFields<Event>>> {
  private readonly events: Repository<Event>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly entity: EntityTarget<Event>,
  ) {
    this.events = dataSource.getRepository(entity);
  }

  /** Stores events numbered by their writer; one already stored under its (run, seq) is left as it is. Returns the seqs stored now (none for a re-send). */
  async append(runId: string, events: ReadonlyArray<Numbered<New>>): Promise<number[]> {
    if (events.length === 0) {
      return [];
    }
    const inserted = await this.events
      .createQueryBuilder()
      .insert()
      .into(this.entity)
      .values(events.map((event) => this.row(runId, event)))
      .orIgnore()
      .returning(['seq'])
      .execute();
    return (inserted.raw as Array<{ seq: number }>).map((row) => row.seq);
  }

  /**
   * Stores events after the run's last one, numbered in the order given, and returns their seqs.
   * Appends to one run take turns until they commit, so numbers follow commit order: a reader
   * that sees seq n also sees every event before it.
   */
  appendNext(runId: string, events: readonly New[]): Promise<number[]> {
    if (events.length === 0) {
      return Promise.resolve([]);
    }
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${this.events.metadata.tableName}:${runId}`]);
      const last = await this.lastSeqOf(manager, runId);
      const seqs = events.map((_, index) => last + index + 1);
      await manager
        .createQueryBuilder()
        .insert()
        .into(this.entity)
        .values(events.map((event, index) => this.row(runId, { ...event, seq: seqs[index] })))
        .execute();
      return seqs;
    });
  }

  /** The run's events after `afterSeq` (all of them by default), in order; at most `limit` of them when given. */
  list(runId: string, afterSeq = 0, limit?: number): Promise<Event[]> {
    const query = this.events.createQueryBuilder('event').where('event.runId = :runId AND event.seq > :afterSeq', { runId, afterSeq }).orderBy('event.seq', 'ASC');
    return (limit === undefined ? query : query.limit(limit)).getMany();
  }

  /** The seq of the run's latest event (0 before any). */
  lastSeq(runId: string): Promise<number> {
    return this.lastSeqOf(this.events.manager, runId);
  }

  /** How many events the run has. */
  count(runId: string): Promise<number> {
    return this.events.createQueryBuilder('event').where('event.runId = :runId', { runId }).getCount();
  }

  /** Whether the run has an event under `seq`. */
  has(runId: string, seq: number): Promise<boolean> {
    return this.events.createQueryBuilder('event').where('event.runId = :runId AND event.seq = :seq', { runId, seq }).getExists();
  }

  private row(runId: string, event: Numbered<New>): QueryDeepPartialEntity<Event> {
    // `New` holds only fields of `Event` (its constraint), but TypeScript cannot follow an Omit of a type parameter.
    return entityChanges<Event>({ ...event, runId } as unknown as Partial<Event>);
  }

  private async lastSeqOf(manager: EntityManager, runId: string): Promise<number> {
    const row = await manager.createQueryBuilder(this.entity, 'event').select('max(event.seq)', 'last').where('event.runId = :runId', { runId }).getRawOne<{ last: number | null }>();
    return Number(row?.last ?? 0);
  }
}
