import type { DataSource } from 'typeorm';
import type { Message } from '@ccos/shared/messages';
import { RemovalEventEntity } from './entities/removal-event.entity';
import { RemovalRunEntity, type RemovalDecision } from './entities/removal-run.entity';
import { entityChanges } from './entity-changes';
import { returningRows } from './returning-rows';
import { RunStore } from './run.store';
import { uniqueViolationOf } from './unique-violation';

/** What a new run is made of; the rest (blocking pods, cancel flag, times) starts empty. */
export type NewRemovalRun = Pick<RemovalRunEntity, 'id' | 'nodeId' | 'clusterId' | 'nodeName' | 'nodeUid' | 'phase' | 'options' | 'requestedBy'>;

/** The fields of a run its executing replica changes as it goes. */
export type RemovalRunProgress = Partial<Pick<RemovalRunEntity, 'status' | 'phase' | 'reason' | 'reasonCoded' | 'blocking' | 'finishedAt' | 'blocker' | 'blockerSince'>>;

/** One event of a run as it is stored (the log numbers it: `events.appendNext`). */
export type NewRemovalEvent = Pick<RemovalEventEntity, 'kind' | 'phase' | 'pod' | 'pdb' | 'message' | 'messageCoded' | 'detail' | 'occurredAt'>;

/** The decisions an operator can take about a running removal, by the run's field. */
export type RemovalDecisionKind = 'skipHost' | 'forceDrain';

const DECISION_COLUMNS: Readonly<Record<RemovalDecisionKind, { readonly column: string; readonly phase: string | null }>> = {
  skipHost: { column: 'skip_host', phase: null },
  forceDrain: { column: 'force_drain', phase: 'DRAIN' },
};

/** What a heartbeat learned about a run this replica still owns. */
export interface RemovalRunBeat {
  readonly cancelRequested: boolean;
  readonly reason: string | null;
  readonly reasonCoded: Message | null;
  /** An operator asked the run to go on without its host. */
  readonly skipHost: RemovalDecision | null;
  /** An ADMIN asked the drain to go past the budgets that hold it. */
  readonly forceDrain: RemovalDecision | null;
}

/**
 * `removal_runs` and their ordered `removal_events` (numbered by the store as they are
 * appended). A RUNNING run is executed by the worker holding its job, which `take`s it
 * (`owner`); every change its executor makes is conditional on still owning it, so an executor
 * that lost the run can no longer write to it.
 */
export class RemovalRunStore extends RunStore<RemovalRunEntity, RemovalEventEntity, NewRemovalEvent> {
  constructor(dataSource: DataSource) {
    super(dataSource, RemovalRunEntity, RemovalEventEntity);
  }

  /** The node's RUNNING run, if any (a unique index allows one). */
  runningOf(nodeId: string): Promise<RemovalRunEntity | null> {
    return this.runs.findOneBy({ nodeId, status: 'RUNNING' });
  }

  /** Stores a new RUNNING run; null when the node has one running already (the unique index decides, across replicas). */
  async insertRunning(run: NewRemovalRun): Promise<RemovalRunEntity | null> {
    try {
      await this.runs.insert(this.runs.create({ ...run, status: 'RUNNING' }));
    } catch (error) {
      if (uniqueViolationOf(error)) {
        return null;
      }
      throw error;
    }
    return this.get(run.id);
  }

  /** Flags a RUNNING run for cancellation; its executor's heartbeat sees the flag. */
  async requestCancel(id: string, reason: Pick<RemovalRunEntity, 'reason' | 'reasonCoded'>): Promise<void> {
    await this.runs.update({ id, status: 'RUNNING' }, { cancelRequested: true, ...reason });
  }

  /**
   * Records an operator's decision about a RUNNING run (going on without its host; forcing the
   * drain, only while it drains); false when the run is not in that state or was told so already.
   * The executing replica's heartbeat reads it.
   */
  async requestDecision(id: string, kind: RemovalDecisionKind, decision: RemovalDecision): Promise<boolean> {
    const { column, phase } = DECISION_COLUMNS[kind];
    const rows = await returningRows<{ id: string }>(
      this.runs,
      `UPDATE removal_runs SET ${column} = $2 WHERE id = $1 AND status = 'RUNNING' AND ${column} IS NULL AND ($3::text IS NULL OR phase = $3) RETURNING id`,
      [id, JSON.stringify(decision), phase],
    );
    return rows.length === 1;
  }

  /** Changes a run while `owner` executes it; false when it no longer does (taken over or ended). */
  async updateOwned(id: string, owner: string, fields: RemovalRunProgress): Promise<boolean> {
    const update = await this.runs
      .createQueryBuilder()
      .update(RemovalRunEntity)
      .set(entityChanges<RemovalRunEntity>(fields))
      .where('id = :id AND status = :running AND owner = :owner', { id, running: 'RUNNING', owner })
      .execute();
    return update.affected === 1;
  }

  /** Whether `owner` still executes the run. */
  isOwnedBy(id: string, owner: string): Promise<boolean> {
    return this.runs.existsBy({ id, status: 'RUNNING', owner });
  }

  /** What operators asked of a run `owner` executes (read every few seconds); null when it is no longer theirs (ended, or taken by another worker). */
  async heartbeat(id: string, owner: string): Promise<RemovalRunBeat | null> {
    const [row] = await returningRows<{ cancel_requested: boolean; reason: string | null; reason_coded: Message | null; skip_host: RemovalDecision | null; force_drain: RemovalDecision | null }>(
      this.runs,
      `UPDATE removal_runs SET heartbeat_at = now() WHERE id = $1 AND owner = $2 AND status = 'RUNNING' RETURNING cancel_requested, reason, reason_coded, skip_host, force_drain`,
      [id, owner],
    );
    return row ? { cancelRequested: row.cancel_requested, reason: row.reason, reasonCoded: row.reason_coded, skipHost: row.skip_host, forceDrain: row.force_drain } : null;
  }

  /**
   * Makes `owner` the run's executor, if the run is RUNNING and still has the executor `previous`
   * (null: never executed) the caller read: the job engine gives a run's job to one worker at a
   * time, and this fences off an earlier executor that has not yet noticed it lost the job (its
   * every write is conditional on owning the run). The run as taken, or null.
   */
  async take(id: string, owner: string, previous: string | null): Promise<RemovalRunEntity | null> {
    const taken = await returningRows<{ id: string }>(
      this.runs,
      `UPDATE removal_runs SET owner = $2, heartbeat_at = now() WHERE id = $1 AND status = 'RUNNING' AND owner IS NOT DISTINCT FROM $3 RETURNING id`,
      [id, owner, previous],
    );
    return taken.length === 1 ? this.get(id) : null;
  }

  /** Every RUNNING run, by id and node (queued again at a start, in case its job was lost). */
  running(): Promise<Array<Pick<RemovalRunEntity, 'id' | 'nodeId'>>> {
    return this.runs.find({ select: { id: true, nodeId: true }, where: { status: 'RUNNING' } });
  }

  /** RUNNING runs by phase (the metrics; every replica reads the same). */
  async runningByPhase(): Promise<Array<{ phase: string; count: number }>> {
    const rows: Array<{ phase: string; count: string }> = await this.runs.query(`SELECT phase, count(*) AS count FROM removal_runs WHERE status = 'RUNNING' GROUP BY phase`);
    return rows.map((row) => ({ phase: row.phase, count: Number(row.count) }));
  }
}
