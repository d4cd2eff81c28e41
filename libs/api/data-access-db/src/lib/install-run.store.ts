import { type DataSource, IsNull, type Repository } from 'typeorm';
import type { InstallStep } from '@ccos/shared/domain';
import { InstallDiagnosticsEntity } from './entities/install-diagnostics.entity';
import { InstallRunEntity } from './entities/install-run.entity';
import { StepEventEntity } from './entities/step-event.entity';
import { entityChanges } from './entity-changes';
import { isUuid } from './node.store';
import { returningRows } from './returning-rows';
import { RunStore } from './run.store';

/** What starting a run stores; the rest takes the columns' defaults. */
export type NewInstallRun = Pick<
  InstallRunEntity,
  'id' | 'nodeId' | 'status' | 'agentTokenHash' | 'agentTokenExpiresAt' | 'deadlineAt' | 'startStep' | 'requestedBy' | 'agentChannel' | 'launchOwner' | 'launchHeartbeatAt'
>;

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

/** A run's diagnostics bundle without its content. */
export type InstallDiagnosticsSummary = Pick<InstallDiagnosticsEntity, 'runId' | 'size' | 'uploadedAt'>;

/**
 * `install_runs`, their ordered `step_events` (numbered by the agent, so a re-sent event is
 * stored once) and their `install_diagnostics`. A run is RUNNING until it ends, once: ending it,
 * and every change made while it runs, is conditional on its status (a compare-and-set), so a
 * late writer never changes a run that ended. Starting its agent belongs to one replica
 * (`launch_owner`) until that replica's heartbeat goes stale.
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

  /**
   * Claims for `owner` the starts of RUNNING runs whose agent nobody recorded started and whose
   * launch owner's heartbeat is older than `staleAfterSeconds` (rows another replica is claiming
   * are skipped). Returns the claimed runs' ids and their previous owners.
   */
  claimAbandonedLaunches(owner: string, staleAfterSeconds: number): Promise<Array<{ id: string; previous: string | null }>> {
    return returningRows<{ id: string; previous: string | null }>(
      this.runs,
      `UPDATE install_runs AS run SET launch_owner = $1, launch_heartbeat_at = now()
        FROM (SELECT id, launch_owner AS previous FROM install_runs
               WHERE status = 'RUNNING' AND agent_launched_at IS NULL AND launch_owner IS NOT NULL
                 AND launch_heartbeat_at < now() - make_interval(secs => $2)
               FOR UPDATE SKIP LOCKED) AS abandoned
        WHERE run.id = abandoned.id
        RETURNING run.id, abandoned.previous`,
      [owner, staleAfterSeconds],
    );
  }

  /** Renews `owner`'s claim on starting the run's agent, while nobody recorded it started. */
  async renewLaunch(id: string, owner: string, at: Date): Promise<void> {
    await this.runs.update({ id, launchOwner: owner, agentLaunchedAt: IsNull() }, { launchHeartbeatAt: at });
  }

  /** Records the run's agent started. */
  async launched(id: string, at: Date): Promise<void> {
    await this.runs.update({ id }, { agentLaunchedAt: at });
  }

  /** Gives a RUNNING run a new agent token (its hash). */
  async replaceTokenWhileRunning(id: string, agentTokenHash: string): Promise<void> {
    await this.runs.update({ id, status: 'RUNNING' }, { agentTokenHash });
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

  /** RUNNING runs whose deadline is `now` or earlier. */
  overdue(now: Date): Promise<InstallRunEntity[]> {
    return this.runs.createQueryBuilder('run').where("run.status = 'RUNNING' AND run.deadline_at <= :now", { now }).getMany();
  }

  /** RUNNING runs of INSTALLING nodes whose agent was last heard from (or that started) before `cutoff`. */
  silentSince(cutoff: Date): Promise<InstallRunEntity[]> {
    return this.runs
      .createQueryBuilder('run')
      .innerJoin('nodes', 'node', 'node.id = run.node_id')
      .where("run.status = 'RUNNING' AND node.status = 'INSTALLING'")
      .andWhere('COALESCE(run.last_event_at, run.started_at) < :cutoff', { cutoff })
      .getMany();
  }

  /** The cluster of the run's node; null when the node is gone. */
  async clusterOf(run: Pick<InstallRunEntity, 'nodeId'>): Promise<string | null> {
    const rows: Array<{ cluster_id: string }> = await this.runs.manager.query('SELECT cluster_id FROM nodes WHERE id = $1', [run.nodeId]);
    return rows[0]?.cluster_id ?? null;
  }

  /** Running runs by the step they are at (the step of their latest event; their start step before any). */
  async runningByStep(): Promise<Array<{ step: string; count: number }>> {
    const rows: Array<{ step: string; count: string }> = await this.runs.query(
      `SELECT coalesce(e.step, r.start_step) AS step, count(*) AS count
         FROM install_runs r
         LEFT JOIN LATERAL (SELECT step FROM step_events WHERE run_id = r.id ORDER BY seq DESC LIMIT 1) e ON true
        WHERE r.status = 'RUNNING'
        GROUP BY 1`,
    );
    return rows.map((row) => ({ step: row.step, count: Number(row.count) }));
  }

  /** The step of the latest event of each node's latest RUNNING run, for the nodes that have one. */
  async currentSteps(nodeIds: readonly string[]): Promise<Map<string, InstallStep>> {
    if (nodeIds.length === 0) {
      return new Map();
    }
    const rows: Array<{ node_id: string; step: InstallStep }> = await this.runs.query(
      `SELECT DISTINCT ON (r.node_id) r.node_id, e.step
         FROM install_runs r JOIN step_events e ON e.run_id = r.id
        WHERE r.node_id = ANY($1) AND r.status = 'RUNNING'
        ORDER BY r.node_id, r.started_at DESC, e.seq DESC`,
      [[...nodeIds]],
    );
    return new Map(rows.map((row) => [row.node_id, row.step]));
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
