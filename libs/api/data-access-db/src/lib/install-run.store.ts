import { type DataSource, type EntityManager, In, IsNull, Not, type Repository } from 'typeorm';
import type { InstallStep, NodeStatus } from '@ccos/shared/domain';
import type { AgentCredential } from './agent-tokens';
import { InstallDiagnosticsEntity } from './entities/install-diagnostics.entity';
import { InstallRunEntity } from './entities/install-run.entity';
import { StepEventEntity } from './entities/step-event.entity';
import { entityChanges } from './entity-changes';
import { isUuid } from './node.store';
import { returningRows } from './returning-rows';
import { RunStore } from './run.store';

/** What starting a run stores; the rest takes the columns' defaults (`admittedAt` null: it waits for an install slot; an INSTALL run unless said). */
export type NewInstallRun = Pick<
  InstallRunEntity,
  'id' | 'nodeId' | 'status' | 'agentTokenHash' | 'agentTokenExpiresAt' | 'deadlineAt' | 'startStep' | 'requestedBy' | 'agentChannel' | 'admittedAt'
> & Partial<Pick<InstallRunEntity, 'purpose' | 'steps'>>;

/** The fields ending a run sets. */
export type InstallRunEnd = Pick<InstallRunEntity, 'status' | 'failedStep' | 'reason' | 'reasonCoded' | 'finishedAt' | 'agentTokenExpiresAt'>;

/** A run's bootstrap identity as recorded on it. */
export type InstallRunIdentity = Partial<Pick<InstallRunEntity, 'bootstrapIdentity' | 'bootstrapIdentityUid' | 'bootstrapIdentityExpiresAt' | 'bootstrapIdentityRevokedAt'>>;

/** One agent event as it is stored (the agent numbers it: `events.append`). */
export type NewStepEvent = Pick<StepEventEntity, 'step' | 'status' | 'progress' | 'message' | 'messageCoded' | 'detail' | 'occurredAt'>;

/** What one run may store: events and their bytes, and what the events that finish steps may use beyond that. */
export interface RunEventCaps {
  /** PROGRESS events stop here. */
  readonly events: number;
  /** PROGRESS events stop when their bytes would pass this. */
  readonly bytes: number;
  /** STARTED, SUCCEEDED and FAILED events may go this many events and bytes further, so a run can still finish. */
  readonly reserveEvents: number;
  readonly reserveBytes: number;
}

/** What admitting an event did: stored, a re-send of a stored one, or refused (the run has ended, or a cap). */
export type EventAdmission =
  | { readonly outcome: 'STORED' | 'DUPLICATE' }
  | { readonly outcome: 'RUN_FINISHED'; readonly status: string }
  | { readonly outcome: 'EVENT_COUNT' | 'EVENT_BYTES'; readonly count: number; readonly bytes: number; readonly limit: number };

/** One event of a batch (`admitEventBatch`): numbered by the agent, with what it weighs against the run's byte cap. */
export type BatchStepEvent = NewStepEvent & { readonly seq: number; readonly bytes: number };

/** What {@link InstallRunStore.admitEventBatch} stored, and what the caller needs of the run without reading it. */
export interface AdmittedBatch {
  /** The seqs stored now, in order (the others were stored before). */
  readonly stored: number[];
  readonly nodeId: string;
  readonly nodeStatus: NodeStatus;
  readonly cancelRequested: boolean;
}

/** Where a run waiting for an install slot stands: `position` of `waiting` in its cluster's line, which runs `limit` installs at once. */
export interface PlaceInLine {
  readonly position: number;
  readonly waiting: number;
  readonly limit: number;
}

/** A node's install in progress, as a batch's view counts it. */
export interface RunningInstall {
  readonly step: InstallStep | null;
  readonly waitingForSlot: boolean;
}

/** A run's diagnostics bundle without its content. */
export type InstallDiagnosticsSummary = Pick<InstallDiagnosticsEntity, 'runId' | 'size' | 'uploadedAt'>;

/** Install runs with their node (for its cluster): `r` is the run, `n` the node. */
const RUNS_AND_NODES = 'install_runs r JOIN nodes n ON n.id = r.node_id';
/** A run asked for that waits for an install slot of its cluster (`r`: an install run). */
const WAITS_FOR_SLOT = `r.status = 'RUNNING' AND r.admitted_at IS NULL`;
/** A run that holds one of its cluster's install slots (a rollout's apply runs are held by the rollout's budget instead). */
const HOLDS_SLOT = `r.status = 'RUNNING' AND r.admitted_at IS NOT NULL AND r.purpose = 'INSTALL'`;
/** The step of run `r`'s latest event, for a lateral join. */
const LATEST_STEP = 'SELECT step FROM step_events WHERE run_id = r.id ORDER BY seq DESC LIMIT 1';

/**
 * `install_runs`, their ordered `step_events` (numbered by the agent, so a re-sent event is
 * stored once) and their `install_diagnostics`. A run is RUNNING until it ends, once: ending it,
 * and every change made while it runs, is conditional on its status (a compare-and-set), so a
 * late writer never changes a run that ended. Its agent is started by a durable job
 * (feature-installs' `install.launch`), which the job engine gives to one worker at a time.
 * (The agent tokens of runs are {@link AgentTokens}'.)
 */
export class InstallRunStore extends RunStore<InstallRunEntity, StepEventEntity, NewStepEvent> {
  private readonly stepEvents: Repository<StepEventEntity>;
  private readonly diagnostics: Repository<InstallDiagnosticsEntity>;

  constructor(private readonly dataSource: DataSource) {
    super(dataSource, InstallRunEntity, StepEventEntity);
    this.stepEvents = dataSource.getRepository(StepEventEntity);
    this.diagnostics = dataSource.getRepository(InstallDiagnosticsEntity);
  }

  /** Stores a new run. */
  insert(run: NewInstallRun): Promise<InstallRunEntity> {
    return this.runs.save(this.runs.create(run));
  }

  /** Ends a RUNNING run; false when it had ended already (a run ends once). */
  async end(id: string, fields: InstallRunEnd): Promise<boolean> {
    const ended = await this.runs.update({ id, status: 'RUNNING' }, fields);
    return ended.affected === 1;
  }

  /**
   * Stores one agent event if its run is RUNNING and within its caps, counting it and its
   * `bytes` on the run in the same transaction: concurrent reports of one run cannot pass a cap
   * together, and a run that ended meanwhile takes nothing. A seq stored before is a DUPLICATE
   * (nothing counted). A refusal for a cap records when the run was first capped.
   */
  async admitEvent(runId: string, event: NewStepEvent & { readonly seq: number }, bytes: number, caps: RunEventCaps): Promise<EventAdmission> {
    const reserved = event.status !== 'PROGRESS';
    const maxEvents = caps.events + (reserved ? caps.reserveEvents : 0);
    const maxBytes = caps.bytes + (reserved ? caps.reserveBytes : 0);
    const admission = await this.dataSource.transaction(async (manager): Promise<EventAdmission> => {
      const counted = await returningRows<{ id: string }>(
        manager,
        `UPDATE install_runs SET event_count = event_count + 1, event_bytes = event_bytes + $2
          WHERE id = $1 AND status = 'RUNNING' AND event_count < $3 AND event_bytes + $2 <= $4
          RETURNING id`,
        [runId, bytes, maxEvents, maxBytes],
      );
      if (counted.length === 0) {
        const rows: Array<{ status: string; event_count: number; event_bytes: string }> = await manager.query('SELECT status, event_count, event_bytes FROM install_runs WHERE id = $1', [runId]);
        const run = rows[0];
        if (!run || run.status !== 'RUNNING') {
          return { outcome: 'RUN_FINISHED', status: run?.status ?? 'UNKNOWN' };
        }
        const count = Number(run.event_count);
        return count >= maxEvents
          ? { outcome: 'EVENT_COUNT', count, bytes: Number(run.event_bytes), limit: maxEvents }
          : { outcome: 'EVENT_BYTES', count, bytes: Number(run.event_bytes), limit: maxBytes };
      }
      const inserted = await manager
        .createQueryBuilder()
        .insert()
        .into(StepEventEntity)
        .values(entityChanges<StepEventEntity>({ ...event, runId }))
        .orIgnore()
        .returning(['seq'])
        .execute();
      if ((inserted.raw as unknown[]).length === 0) {
        // Stored meanwhile by a concurrent re-send: take the count back.
        await manager.query('UPDATE install_runs SET event_count = event_count - 1, event_bytes = event_bytes - $2 WHERE id = $1', [runId, bytes]);
        return { outcome: 'DUPLICATE' };
      }
      return { outcome: 'STORED' };
    });
    if (admission.outcome === 'EVENT_COUNT' || admission.outcome === 'EVENT_BYTES') {
      await this.markEventsCapped(runId);
    }
    return admission;
  }

  /**
   * Stores a batch of one run's events, in seq order, in one statement (one transaction, one round
   * trip): the events, the run's counters and when its agent was last heard from together, and
   * only while the run is RUNNING, `credential` is its agent token's and still valid, and the
   * batch fits in `room` whatever the run had stored (so the caller need not read the run first).
   * A seq stored before is left as it was and not counted. Says the run's node and its status,
   * and whether an operator asked to cancel. Null when any of that does not hold (nothing stored):
   * the caller then authenticates and admits the events one by one.
   */
  async admitEventBatch(
    runId: string,
    credential: AgentCredential,
    events: readonly BatchStepEvent[],
    room: { readonly events: number; readonly bytes: number },
    heardAt: Date,
  ): Promise<AdmittedBatch | null> {
    if (!isUuid(runId)) {
      return null;
    }
    const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));
    const rows: Array<{ guarded: boolean; stored: number[] | null; node_id: string; node_status: NodeStatus; cancel_requested: boolean }> = await this.dataSource.query(
      `WITH incoming AS (
         SELECT * FROM unnest($4::int[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::bigint[])
           AS e(seq, step, status, progress, message, message_coded, detail, occurred_at, bytes)
       ), run AS (
         SELECT id, node_id, cancel_requested FROM install_runs
          WHERE id = $1 AND status = 'RUNNING' AND agent_token_hash = $2 AND agent_token_expires_at > $3
            AND event_count + (SELECT count(*) FROM incoming) <= $14 AND event_bytes + (SELECT COALESCE(sum(bytes), 0) FROM incoming) <= $15
          FOR UPDATE
       ), stored AS (
         INSERT INTO step_events (run_id, seq, step, status, progress, message, message_coded, detail, occurred_at)
         SELECT $1, seq, step, status, progress, message, message_coded::jsonb, detail::jsonb, occurred_at FROM incoming
          WHERE EXISTS (SELECT 1 FROM run) ORDER BY seq
         ON CONFLICT ON CONSTRAINT step_events_run_seq DO NOTHING
         RETURNING seq
       ), counted AS (
         UPDATE install_runs SET
           event_count = event_count + (SELECT count(*) FROM stored),
           event_bytes = event_bytes + COALESCE((SELECT sum(incoming.bytes) FROM incoming JOIN stored USING (seq)), 0),
           last_event_at = $13, agent_launched_at = COALESCE(agent_launched_at, $13)
         WHERE id IN (SELECT id FROM run)
         RETURNING id
       )
       SELECT EXISTS (SELECT 1 FROM counted) AS guarded, (SELECT array_agg(seq ORDER BY seq) FROM stored) AS stored,
         run.node_id, run.cancel_requested, (SELECT nodes.status FROM nodes WHERE nodes.id = run.node_id) AS node_status
         FROM run`,
      [
        runId, credential.hash, credential.validAt,
        events.map((event) => event.seq), events.map((event) => event.step), events.map((event) => event.status), events.map((event) => event.progress),
        events.map((event) => event.message), events.map((event) => json(event.messageCoded)), events.map((event) => json(event.detail)),
        events.map((event) => event.occurredAt.toISOString()), events.map((event) => event.bytes), heardAt, room.events, room.bytes,
      ],
    );
    const [row] = rows;
    return row?.guarded ? { stored: row.stored ?? [], nodeId: row.node_id, nodeStatus: row.node_status, cancelRequested: row.cancel_requested } : null;
  }

  /** Records that the run refused an event for a cap, the first time it does. */
  async markEventsCapped(runId: string): Promise<void> {
    await this.runs.update({ id: runId, eventsCappedAt: IsNull() }, { eventsCappedAt: new Date() });
  }

  /** Flags the run as cancelled by an operator (the agent hears of it in its answers). */
  async requestCancel(id: string): Promise<void> {
    await this.runs.update(id, { cancelRequested: true });
  }

  /** When the run's agent was last heard from. */
  async heardFrom(id: string, at: Date): Promise<void> {
    // An agent that reports was started, whichever replica's SSH session started it, and even if
    // that replica died before recording it: from now on nobody may take its launch over (a
    // takeover stops the running agent and starts another).
    await this.runs.query('UPDATE install_runs SET last_event_at = $2, agent_launched_at = COALESCE(agent_launched_at, $2) WHERE id = $1', [id, at]);
  }

  /** RUNNING runs whose agent nobody has started yet (their launch job waits, runs, or was never queued). */
  notLaunched(): Promise<InstallRunEntity[]> {
    return this.runs.find({ where: { status: 'RUNNING', admittedAt: Not(IsNull()), agentLaunchedAt: IsNull() }, order: { startedAt: 'ASC' } });
  }

  /**
   * Gives the cluster's waiting runs the install slots its running ones leave free
   * (`clusters.installs_at_once`), oldest request first, in one transaction that holds the
   * cluster's row, so two processes never give one slot twice. An admitted run's deadline (and its
   * agent token's) counts from now. The runs admitted, and the cluster's limit (0 when it is gone).
   */
  async admitWaiting(clusterId: string, now: Date, deadlineMs: number): Promise<{ readonly admitted: InstallRunEntity[]; readonly limit: number }> {
    // Most calls in a join storm find the cluster full: they learn it without waiting for its lock.
    const full: Array<{ installs_at_once: number; free: number; waiting: boolean }> = await this.runs.query(
      `SELECT c.installs_at_once,
              c.installs_at_once - (SELECT count(*) FROM ${RUNS_AND_NODES} WHERE n.cluster_id = c.id AND ${HOLDS_SLOT})::int AS free,
              EXISTS (SELECT 1 FROM ${RUNS_AND_NODES} WHERE n.cluster_id = c.id AND ${WAITS_FOR_SLOT}) AS waiting
         FROM clusters c WHERE c.id = $1`,
      [clusterId],
    );
    if (!full[0] || full[0].free <= 0 || !full[0].waiting) {
      return { admitted: [], limit: full[0]?.installs_at_once ?? 0 };
    }
    const { ids: admittedIds, limit } = await this.runs.manager.transaction(async (manager) => {
      const clusters: Array<{ installs_at_once: number }> = await manager.query('SELECT installs_at_once FROM clusters WHERE id = $1 FOR UPDATE', [clusterId]);
      const limit = clusters[0]?.installs_at_once ?? 0;
      const ids = await this.admitInto(manager, clusterId, limit, now, deadlineMs);
      return { ids, limit };
    });
    const admitted = admittedIds.length === 0 ? [] : await this.runs.find({ where: { id: In(admittedIds) }, order: { startedAt: 'ASC' } });
    return { admitted, limit };
  }

  /** Within the admission's transaction: the oldest waiting runs, as many as the cluster's running ones leave free of `limit`. */
  private async admitInto(manager: EntityManager, clusterId: string, limit: number, now: Date, deadlineMs: number): Promise<string[]> {
    const running: Array<{ count: string }> = await manager.query(
      `SELECT count(*) AS count FROM ${RUNS_AND_NODES} WHERE n.cluster_id = $1 AND ${HOLDS_SLOT}`,
      [clusterId],
    );
    const free = limit - Number(running[0]?.count ?? 0);
    if (free <= 0) {
      return [];
    }
    const deadline = new Date(now.getTime() + deadlineMs);
    const admitted = await returningRows<{ id: string }>(
      manager,
      `UPDATE install_runs SET admitted_at = $2, deadline_at = $3, agent_token_expires_at = $3
        WHERE id IN (SELECT r.id FROM ${RUNS_AND_NODES} WHERE n.cluster_id = $1 AND ${WAITS_FOR_SLOT} ORDER BY r.started_at, r.id LIMIT $4)
        RETURNING id`,
      [clusterId, now, deadline, free],
    );
    return admitted.map((row) => row.id);
  }

  /** The clusters that have runs waiting for an install slot. */
  async clustersWithWaitingRuns(): Promise<string[]> {
    const rows: Array<{ cluster_id: string }> = await this.runs.query(
      `SELECT DISTINCT n.cluster_id FROM ${RUNS_AND_NODES} WHERE ${WAITS_FOR_SLOT}`,
    );
    return rows.map((row) => row.cluster_id);
  }

  /**
   * Where each of these waiting runs stands in its cluster's line (1: next to be admitted), with
   * the line's length and the cluster's limit; runs that do not wait are left out.
   */
  async placesInLine(runIds: readonly string[]): Promise<Map<string, PlaceInLine>> {
    if (runIds.length === 0) {
      return new Map();
    }
    const rows: Array<{ id: string; position: string; waiting: string; limit: number }> = await this.runs.query(
      `SELECT id, position, waiting, installs_at_once AS limit FROM (
         SELECT r.id, c.installs_at_once,
                row_number() OVER (PARTITION BY n.cluster_id ORDER BY r.started_at, r.id) AS position,
                count(*) OVER (PARTITION BY n.cluster_id) AS waiting
           FROM ${RUNS_AND_NODES} JOIN clusters c ON c.id = n.cluster_id
          WHERE ${WAITS_FOR_SLOT}
            AND n.cluster_id IN (SELECT n2.cluster_id FROM install_runs r2 JOIN nodes n2 ON n2.id = r2.node_id WHERE r2.id = ANY($1::uuid[]))
       ) line WHERE id = ANY($1::uuid[])`,
      [runIds.filter(isUuid)],
    );
    return new Map(rows.map((row) => [row.id, { position: Number(row.position), waiting: Number(row.waiting), limit: row.limit }]));
  }

  /** Records the run's agent started. */
  async launched(id: string, at: Date): Promise<void> {
    await this.runs.update({ id }, { agentLaunchedAt: at });
  }

  /** A new agent token for a run whose agent has not started (nor reported); false when it ended or its agent did. */
  async replaceTokenBeforeLaunch(id: string, agentTokenHash: string): Promise<boolean> {
    const stored = await this.runs.update({ id, status: 'RUNNING', agentLaunchedAt: IsNull() }, { agentTokenHash });
    return Boolean(stored.affected);
  }

  /** Records the run's bootstrap identity while it runs; false when the run ended. */
  async recordIdentityWhileRunning(id: string, identity: InstallRunIdentity): Promise<boolean> {
    const stored = await this.runs.update({ id, status: 'RUNNING' }, identity);
    return Boolean(stored.affected);
  }

  /** Records the run's bootstrap identity deleted from its cluster. */
  async identityRevoked(id: string, at: Date): Promise<void> {
    await this.runs.update({ id }, { bootstrapIdentityRevokedAt: at });
  }

  /** Runs that ended, or passed their deadline by `now`, and still hold a bootstrap identity. */
  withIdentityToRevoke(now: Date): Promise<InstallRunEntity[]> {
    return this.runs
      .createQueryBuilder('run')
      .where('run.bootstrap_identity IS NOT NULL AND run.bootstrap_identity_revoked_at IS NULL')
      .andWhere("(run.status <> 'RUNNING' OR run.deadline_at <= :now)", { now })
      .getMany();
  }

  /** RUNNING runs whose deadline is `now` or earlier (a run waiting for an install slot has none yet). */
  overdue(now: Date): Promise<InstallRunEntity[]> {
    return this.runs.createQueryBuilder('run').where("run.status = 'RUNNING' AND run.admitted_at IS NOT NULL AND run.deadline_at <= :now", { now }).getMany();
  }

  /** RUNNING runs of INSTALLING nodes whose agent was last heard from (or that were admitted) before `cutoff`; waiting runs are not silent. */
  silentSince(cutoff: Date): Promise<InstallRunEntity[]> {
    return this.runs
      .createQueryBuilder('run')
      .innerJoin('nodes', 'node', 'node.id = run.node_id')
      .where("run.status = 'RUNNING' AND run.admitted_at IS NOT NULL AND node.status = 'INSTALLING'")
      .andWhere('COALESCE(run.last_event_at, run.admitted_at) < :cutoff', { cutoff })
      .getMany();
  }

  /** The cluster of the run's node; null when the node is gone. */
  async clusterOf(run: Pick<InstallRunEntity, 'nodeId'>): Promise<string | null> {
    const rows: Array<{ cluster_id: string }> = await this.runs.manager.query('SELECT cluster_id FROM nodes WHERE id = $1', [run.nodeId]);
    return rows[0]?.cluster_id ?? null;
  }

  /** Running runs by the step they are at (the step of their latest event; their start step before any); waiting runs left out. */
  async runningByStep(): Promise<Array<{ step: string; count: number }>> {
    const rows: Array<{ step: string; count: string }> = await this.runs.query(
      `SELECT coalesce(e.step, r.start_step) AS step, count(*) AS count
         FROM install_runs r
         LEFT JOIN LATERAL (${LATEST_STEP}) e ON true
        WHERE ${HOLDS_SLOT}
        GROUP BY 1`,
    );
    return rows.map((row) => ({ step: row.step, count: Number(row.count) }));
  }

  /** Runs waiting for an install slot, by cluster (clusters without any left out). */
  async waitingByCluster(): Promise<Array<{ clusterId: string; count: number }>> {
    const rows: Array<{ cluster_id: string; count: string }> = await this.runs.query(
      `SELECT n.cluster_id, count(*) AS count FROM ${RUNS_AND_NODES} WHERE ${WAITS_FOR_SLOT} GROUP BY n.cluster_id`,
    );
    return rows.map((row) => ({ clusterId: row.cluster_id, count: Number(row.count) }));
  }

  /**
   * Each node's latest RUNNING install: the step of its latest event (null before the first) and
   * whether it still waits for a slot of its cluster (not admitted yet). Nodes without one are absent.
   */
  async runningInstalls(nodeIds: readonly string[]): Promise<Map<string, RunningInstall>> {
    if (nodeIds.length === 0) {
      return new Map();
    }
    const rows: Array<{ node_id: string; step: InstallStep | null; waiting: boolean }> = await this.runs.query(
      `SELECT DISTINCT ON (r.node_id) r.node_id, latest.step, r.admitted_at IS NULL AS waiting
         FROM install_runs r
         LEFT JOIN LATERAL (${LATEST_STEP}) latest ON true
        WHERE r.node_id = ANY($1) AND r.status = 'RUNNING'
        ORDER BY r.node_id, r.started_at DESC`,
      [[...nodeIds]],
    );
    return new Map(rows.map((row) => [row.node_id, { step: row.step, waitingForSlot: row.waiting }]));
  }

  /** When the latest STARTED event of `step` before `seq` occurred (by the agent's clock); null without one. */
  async startedBefore(runId: string, step: InstallStep, seq: number): Promise<Date | null> {
    const started = await this.stepEvents
      .createQueryBuilder('event')
      .select('event.occurredAt', 'occurredAt')
      .where('event.runId = :runId AND event.step = :step AND event.status = :started AND event.seq < :seq', { runId, step, started: 'STARTED', seq })
      .orderBy('event.seq', 'DESC')
      .limit(1)
      .getRawOne<{ occurredAt: Date }>();
    return started ? new Date(started.occurredAt) : null;
  }

  /** Stores the run's diagnostics bundle unless it has one: false when one was stored before (the first is kept). */
  async saveDiagnostics(runId: string, content: Buffer, uploadedAt: Date): Promise<boolean> {
    const inserted = await this.diagnostics
      .createQueryBuilder()
      .insert()
      .into(InstallDiagnosticsEntity)
      .values({ runId, content, size: content.length, uploadedAt })
      .orIgnore()
      .returning(['runId'])
      .execute();
    return (inserted.raw as unknown[]).length === 1;
  }

  /** Whether the run has a diagnostics bundle. */
  hasDiagnostics(runId: string): Promise<boolean> {
    return this.diagnostics.existsBy({ runId });
  }

  /** The run's diagnostics bundle, or null (also for an id that is no UUID). */
  diagnosticsOf(runId: string): Promise<InstallDiagnosticsEntity | null> {
    return isUuid(runId) ? this.diagnostics.findOneBy({ runId }) : Promise.resolve(null);
  }

  /** The run's diagnostics bundle without its content, or null. */
  diagnosticsSummaryOf(runId: string): Promise<InstallDiagnosticsSummary | null> {
    return this.diagnostics.findOne({ where: { runId }, select: { runId: true, size: true, uploadedAt: true } });
  }
}
