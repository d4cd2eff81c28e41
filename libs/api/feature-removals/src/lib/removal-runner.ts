import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { hostQueue, type JobContext, type JobRegistry, type NodeStore, type RemovalBlockingPod, type RemovalDecision, type RemovalDecisionKind, type RemovalRunEntity, type RemovalRunProgress, type RemovalRunStore } from '@ccos/api/data-access-db';
import { nextRemovalPhase, removalCancellable } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import { type Clock, SystemClock } from '@ccos/shared/util-timing';
import type { RemovalPhaseRegistry } from './phases/phase-registry';
import { errorText, type RemovalPhaseContext } from './phases/removal-phase';
import type { RemovalEventInput, RemovalLog, RunEventWriter } from './removal-log';
import type { RemovalObserver } from './removal-ports';

/** The job that executes a removal run (its payload: `runId`). */
export const REMOVAL_TASK = 'removal.run';
/** Each shutdown of the worker executing a run hands it over without using an attempt; these are for failures nobody expected (the database refusing a write). */
const REMOVAL_ATTEMPTS = 10;

export interface RemovalRunnerOptions {
  /** This process in `removal_runs.owner`; default `<hostname>#<pid>`. */
  readonly identity?: string;
  /** How often the executing worker looks for what operators asked on another process (cancel, skip the host, force the drain). Default 5 s. */
  readonly heartbeatMs?: number;
  /** How long a host-side phase waits for a host that does not answer over SSH before the run fails. Default 10 minutes. */
  readonly hostWaitMs?: number;
  /** Wait before retrying an eviction a PodDisruptionBudget refused (the drain phase's). Default 5 s, like kubectl. */
  readonly evictionRetryMs?: number;
  /** Told how runs end and which evictions a PodDisruptionBudget refused (the metrics). */
  readonly observer?: RemovalObserver;
  /** Paces heartbeats, sweeps, drain timeouts and eviction retries; tests pass a virtual one. Default: the process's clock. */
  readonly clock?: Clock;
}

/** A drain executing here that PodDisruptionBudgets have held since `since` with no pod evicted. */
export interface BlockedDrain {
  readonly clusterId: string;
  readonly nodeName: string;
  /** Epoch milliseconds of the first refusal since the last eviction. */
  readonly since: number;
  /** The run's drain timeout (0: none). */
  readonly timeoutSeconds: number;
}

/** Another worker took the run (this one lost its job): stop without touching the run or the node. */
class RunTakenOver extends Error {
  override readonly name = 'RunTakenOver';
}

interface ActiveRun {
  run: RemovalRunEntity;
  readonly writer: RunEventWriter;
  /** Aborts the drain: an operator's cancel, this process shutting down, or the job lost. */
  readonly abort: AbortController;
  cancelled: boolean;
  /** The job was lost (another worker has it), or the run is no longer ours. */
  lost: boolean;
  /** This worker stops: the run is handed over to another. */
  stopping: boolean;
  /** The drain found no Node: nothing to delete. */
  nodeGone: boolean;
  /** Epoch ms of the first eviction a PodDisruptionBudget refused since the drain last evicted a pod. */
  blockedSince: number | null;
  /** Aborts once an operator asks the run to go on without its host (here or, through the heartbeat, on another replica). */
  readonly hostSkip: AbortController;
  /** Aborts once an ADMIN asks the drain to go past the budgets that hold it. */
  readonly forceDrain: AbortController;
  /** The blocker writes in order: a drain names and clears its blocker from its event callback without waiting. */
  blockerWrites: Promise<void>;
  done: Promise<void>;
}

/**
 * Executes removal runs, phase by phase in the domain's order (each phase a handler of the
 * registry in `phases/`: drain, stop the kubelet, delete the Node, deny the node's pending CSRs,
 * revoke its agent tokens, clean the host), recording each step as an event.
 * A run is executed by its `removal.run` job, on the queue of its host (never beside another job
 * on that host), by whichever worker process holds the job: one that stops hands the run over by
 * queuing it again, one that died has its job given to another by the job engine, and the run
 * goes on at its phase (the drain cordons again and evicts what is left). The Node is deleted
 * only after a finished drain and a stopped (or unreachable) kubelet.
 */
export class RemovalRunner {
  readonly identity: string;
  private readonly active = new Map<string, ActiveRun>();
  private readonly log: Logger;
  private readonly heartbeatMs: number;
  private readonly clock: Clock;
  /** Ends every run's loop reading operators' requests. */
  private readonly stopped = new AbortController();
  private stopping = false;

  constructor(
    private readonly runs: RemovalRunStore,
    private readonly nodes: NodeStore,
    private readonly phases: RemovalPhaseRegistry,
    private readonly events: RemovalLog,
    private readonly jobs: JobRegistry,
    logger: Logger,
    private readonly options: RemovalRunnerOptions = {},
  ) {
    this.identity = options.identity ?? `${hostname()}#${process.pid}`;
    this.heartbeatMs = options.heartbeatMs ?? 5000;
    this.clock = options.clock ?? new SystemClock();
    this.log = logger.child({ component: 'removal-runner' });
    jobs.register(REMOVAL_TASK, (payload, context) => this.runJob(String(payload['runId']), context), { long: true });
  }

  /** Queues the run's job, on its host's queue: a new run, or one handed over. */
  async queue(run: Pick<RemovalRunEntity, 'id' | 'nodeId'>): Promise<void> {
    const node = await this.nodes.get(run.nodeId);
    await this.jobs.enqueue(REMOVAL_TASK, { runId: run.id, nodeId: node.id, hostname: node.hostname }, { key: `${REMOVAL_TASK}:${run.id}`, queue: hostQueue(node.ip ?? node.hostname), maxAttempts: REMOVAL_ATTEMPTS });
  }

  /** Queues every RUNNING run again (at a start: a job lost with a database restored from a backup, or never queued); one that has its job already is not run twice. */
  async queueRunning(): Promise<number> {
    const running = await this.runs.running();
    for (const run of running) {
      await this.queue(run);
    }
    return running.length;
  }

  /**
   * The job: takes the run (unless it ended, or another worker took it meanwhile) and executes it
   * from its phase. When this worker stops first, the run is queued again for another, at once.
   */
  async runJob(runId: string, context: Pick<JobContext, 'lost' | 'signal'>): Promise<void> {
    // An executor here that lost this job and has not noticed yet: it stops before its next write.
    await this.active.get(runId)?.done;
    const seen = await this.runs.find(runId);
    if (!seen || seen.status !== 'RUNNING' || this.stopping) {
      return;
    }
    const run = await this.runs.take(runId, this.identity, seen.owner);
    if (!run) {
      return;
    }
    if (seen.owner !== null) {
      this.log.info({ runId, nodeId: run.nodeId, phase: run.phase, previousOwner: seen.owner }, 'resuming a removal run');
    }
    const active = await this.launch(run, seen.owner !== null);
    const lost = () => {
      active.lost = true;
      active.abort.abort();
    };
    const stop = () => {
      active.stopping = true;
      active.abort.abort();
    };
    context.lost.addEventListener('abort', lost, { once: true });
    context.signal?.addEventListener('abort', stop, { once: true });
    // Either may have happened while the run was being taken.
    if (context.lost.aborted) {
      lost();
    } else if (context.signal?.aborted) {
      stop();
    }
    try {
      await active.done;
    } finally {
      context.lost.removeEventListener('abort', lost);
      context.signal?.removeEventListener('abort', stop);
    }
    if ((active.stopping || this.stopping) && !active.lost && (await this.runs.find(runId))?.status === 'RUNNING') {
      // Queued again while this job still runs: the new job waits on the host's queue until this one ends.
      await this.queue(run);
      this.log.info({ runId }, 'handed a removal run over to another worker');
    }
  }

  /** Stops executing: the runs executing here are handed over (their jobs queue them again). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    for (const active of this.active.values()) {
      active.abort.abort();
    }
    await Promise.all([...this.active.values()].map((active) => active.done));
  }

  /** Starts executing a run this process has taken. */
  private async launch(run: RemovalRunEntity, resumed: boolean): Promise<ActiveRun> {
    // Each event is tagged with the phase the run is in as it is recorded (this process's view of the run, kept by save()).
    const writer = await this.events.writer(run, () => active.run.phase);
    const active: ActiveRun = { run, writer, abort: new AbortController(), cancelled: false, lost: false, stopping: false, nodeGone: false, blockedSince: null, hostSkip: new AbortController(), forceDrain: new AbortController(), blockerWrites: Promise.resolve(), done: Promise.resolve() };
    this.active.set(run.id, active);
    active.done = this.execute(active, resumed).finally(() => this.active.delete(run.id));
    return active;
  }

  /** Drains executing on this replica that PodDisruptionBudgets hold now. */
  blockedDrains(): BlockedDrain[] {
    return [...this.active.values()]
      .filter((active) => active.blockedSince !== null)
      .map((active) => ({ clusterId: active.run.clusterId, nodeName: active.run.nodeName, since: active.blockedSince ?? 0, timeoutSeconds: active.run.options.timeoutSeconds }));
  }

  /** Cancels the drain of a run executing here; false when it runs elsewhere or waits for its job (its executor reads the flag). */
  cancelLocal(runId: string, reason: CodedText): boolean {
    const active = this.active.get(runId);
    if (!active) {
      return false;
    }
    active.run.reason = reason.message;
    active.run.reasonCoded = bare(reason);
    this.markCancelled(active);
    return true;
  }

  /** Applies an operator's decision to a run executing here; false when it does not run here (its executor reads the request). */
  decideLocal(runId: string, kind: RemovalDecisionKind, decision: RemovalDecision): boolean {
    const active = this.active.get(runId);
    if (!active) {
      return false;
    }
    this.markDecided(active, kind, decision);
    return true;
  }

  /** Resolves when a run executing here ends, or after `ms` of the process's time (a run executing elsewhere is read again then). */
  async settledWithin(runId: string, ms: number): Promise<void> {
    const timeout = new AbortController();
    const done = this.active.get(runId)?.done;
    await (done ? Promise.race([done, sleep(ms, undefined, { signal: timeout.signal }).catch(() => undefined)]) : sleep(ms));
    timeout.abort();
  }

  /** Calls `task` every heartbeatMs on the clock until `signal` aborts. */
  private async every(signal: AbortSignal, task: () => Promise<unknown>): Promise<void> {
    for (;;) {
      await this.clock.sleep(this.heartbeatMs, signal);
      if (signal.aborted) {
        return;
      }
      await task();
    }
  }

  private markCancelled(active: ActiveRun): void {
    if (active.cancelled || !removalCancellable(active.run.phase)) {
      return;
    }
    active.cancelled = true;
    active.writer.add({
      kind: 'CANCEL_REQUESTED',
      message: message('removal.event.cancelRequested', { reason: active.run.reasonCoded ?? active.run.reason ?? bare(message('removal.cancelRequested')) }),
    });
    active.abort.abort();
  }

  private markDecided(active: ActiveRun, kind: RemovalDecisionKind, decision: RemovalDecision): void {
    const heard = kind === 'skipHost' ? active.hostSkip : active.forceDrain;
    if (heard.signal.aborted) {
      return;
    }
    active.run[kind] = decision;
    heard.abort();
  }

  /** Stores what the run waits for (or that nothing does) and announces it, unless that is what the run shows already. */
  private blockedBy(active: ActiveRun, blocker: Message | null, since: number): Promise<void> {
    active.blockerWrites = active.blockerWrites.then(async () => {
      if (JSON.stringify(active.run.blocker) !== JSON.stringify(blocker) && !this.interrupted(active)) {
        await this.save(active, { blocker, blockerSince: blocker ? new Date(since) : null }).catch((error: unknown) => this.log.warn({ err: error, runId: active.run.id }, 'could not record what the removal waits for'));
      }
    });
    return active.blockerWrites;
  }

  private async execute(active: ActiveRun, resumed: boolean): Promise<void> {
    const { writer } = active;
    const heartbeat = new AbortController();
    void this.every(AbortSignal.any([heartbeat.signal, this.stopped.signal]), () => this.beat(active));
    if (active.run.skipHost) {
      active.hostSkip.abort();
    }
    if (active.run.forceDrain) {
      active.forceDrain.abort();
    }
    try {
      if (resumed) {
        writer.add({ kind: 'RESUMED', message: message('removal.event.resumed', { owner: this.identity, phase: active.run.phase }) });
        const node = await this.nodes.get(active.run.nodeId);
        if (node.status !== 'REMOVING') {
          // Interrupted after the node got its final status: only the run is left to close.
          const status = node.status === 'REMOVED' ? 'SUCCEEDED' : 'FAILED';
          await this.save(
            active,
            { status, phase: status === 'SUCCEEDED' ? 'DONE' : active.run.phase, ...runReason(node.statusReasonCoded ? { ...node.statusReasonCoded, message: node.statusReason ?? '' } : message('node.isStatus', { status: node.status })), finishedAt: new Date(this.clock.now()) },
            { kind: 'FINISHED', message: message('removal.event.closed', { status: node.status }), detail: { status } },
          );
          return;
        }
      } else {
        const options = active.run.options;
        writer.add({
          kind: 'STARTED',
          message: message('removal.event.started', { node: active.run.nodeName, actor: active.run.requestedBy }),
          detail: { options: { ...options, confirmHostname: undefined } },
        });
      }
      if (active.run.cancelRequested) {
        // Asked while the run waited for its job: said after it started, where the log reads right.
        this.markCancelled(active);
      }
      let phase = active.run.phase;
      while (phase !== 'DONE') {
        const result = await this.phases[phase].run(this.contextOf(active));
        if (result.outcome === 'INTERRUPTED') {
          return;
        }
        if (result.outcome !== 'NEXT') {
          await active.blockerWrites;
          await this.end(active, result.outcome, result.reason, result.blocking);
          return;
        }
        active.nodeGone ||= result.nodeGone === true;
        if (this.interrupted(active)) {
          return;
        }
        phase = nextRemovalPhase(phase, active.run.options.cleanHost);
        await active.blockerWrites;
        await this.save(active, { phase, blocker: null, blockerSince: null });
      }
      await this.succeed(active);
    } catch (error) {
      if (this.interrupted(active) || error instanceof RunTakenOver) {
        this.log.info({ runId: active.run.id, reason: errorText(error) }, 'stopped executing a removal run');
        return;
      }
      this.log.error({ err: error, runId: active.run.id }, 'removal run failed unexpectedly');
      await this.end(active, 'FAILED', message('removal.unexpectedError', { phase: active.run.phase, error: errorText(error) }), []).catch((failure: unknown) =>
        this.log.error({ err: failure, runId: active.run.id }, 'could not record the failed removal'),
      );
    } finally {
      heartbeat.abort();
      await writer.flush();
    }
  }

  /** This process stops executing the run: it shuts down, or lost the run's job. */
  private interrupted(active: ActiveRun): boolean {
    return this.stopping || active.stopping || active.lost;
  }

  /** What a phase may touch of the run. */
  private contextOf(active: ActiveRun): RemovalPhaseContext {
    return {
      // A getter: a cancel rewrites the run's reason while its drain goes on.
      get run() {
        return active.run;
      },
      record: (event) => active.writer.add(event),
      signal: active.abort.signal,
      cancelled: () => active.cancelled,
      interrupted: () => this.interrupted(active),
      heldByBudgets: (since) => {
        active.blockedSince = since;
      },
      blockedBy: (blocker, since) => this.blockedBy(active, blocker, since ?? this.clock.now()),
      hostSkip: () => active.run.skipHost,
      hostSkipSignal: AbortSignal.any([active.abort.signal, active.hostSkip.signal]),
      forceDrain: () => active.run.forceDrain,
      forceDrainSignal: active.forceDrain.signal,
    };
  }

  private async succeed(active: ActiveRun): Promise<void> {
    const { run } = active;
    const reason = message('removal.removed', { actor: run.requestedBy, gone: active.nodeGone });
    // The node first: a restart between the two finds the node REMOVED and only closes the run.
    await this.assertOwned(active);
    await this.nodes
      .transition(run.nodeId, 'REMOVAL_SUCCEEDED', message('removal.removedReuse', { reason: bare(reason) }), { ready: false })
      .catch((error: unknown) => this.log.warn({ err: error, runId: run.id }, 'the node could not be marked REMOVED'));
    await this.save(active, { status: 'SUCCEEDED', phase: 'DONE', ...runReason(reason), blocker: null, blockerSince: null, finishedAt: new Date(this.clock.now()) }, { kind: 'FINISHED', message: message('removal.event.removed', { node: run.nodeName }) });
  }

  /** Ends the run as FAILED or CANCELLED; the node becomes DRAIN_FAILED (still cordoned). */
  private async end(active: ActiveRun, status: 'FAILED' | 'CANCELLED', reason: CodedText, blocking: RemovalBlockingPod[]): Promise<void> {
    const { run } = active;
    await this.assertOwned(active);
    await this.nodes
      .transition(run.nodeId, 'DRAIN_FAILED', reason, { unschedulable: true })
      .catch((error: unknown) => this.log.warn({ err: error, runId: run.id }, 'the node could not be marked DRAIN_FAILED'));
    await this.save(active, { status, ...runReason(reason), blocking, blocker: null, blockerSince: null, finishedAt: new Date(this.clock.now()) }, { kind: 'FINISHED', message: message(status === 'CANCELLED' ? 'removal.event.cancelled' : 'removal.event.failed'), detail: { status } });
  }

  /**
   * Updates the run while this process executes it; a run another worker took is left to it.
   * A run that ends has its whole log stored, closing event included, before its final status is
   * written: whoever reads the final status (a follower that then stops) can read every event.
   */
  private async save(active: ActiveRun, fields: RemovalRunProgress, closing?: RemovalEventInput): Promise<void> {
    if (closing) {
      active.writer.add({ ...closing, phase: fields.phase ?? active.run.phase });
      await active.writer.flush();
    }
    if (!(await this.runs.updateOwned(active.run.id, this.identity, fields))) {
      throw new RunTakenOver(`removal run ${active.run.id} is no longer this process's (taken by another worker, or ended)`);
    }
    if (fields.status && fields.status !== 'RUNNING') {
      this.options.observer?.runFinished(fields.status);
    }
    active.run = await this.runs.get(active.run.id);
    active.writer.announce();
  }

  /** Throws RunTakenOver unless this process still executes the run. */
  private async assertOwned(active: ActiveRun): Promise<void> {
    if (!(await this.runs.isOwnedBy(active.run.id, this.identity))) {
      throw new RunTakenOver(`removal run ${active.run.id} is no longer this process's (taken by another worker, or ended)`);
    }
  }

  /** Reads what operators asked on another process (a cancel, a decision), and notices a run another worker took. */
  private async beat(active: ActiveRun): Promise<void> {
    try {
      const beat = await this.runs.heartbeat(active.run.id, this.identity);
      if (!beat) {
        // Ended here meanwhile, or taken by another worker (this one lost the job).
        active.lost = true;
        active.abort.abort();
        return;
      }
      for (const kind of ['skipHost', 'forceDrain'] as const) {
        const decision = beat[kind];
        if (decision) {
          this.markDecided(active, kind, decision);
        }
      }
      if (beat.cancelRequested && !active.cancelled) {
        active.run.reason = beat.reason ?? active.run.reason;
        active.run.reasonCoded = beat.reasonCoded ?? active.run.reasonCoded;
        this.markCancelled(active);
      }
    } catch (error) {
      this.log.warn({ err: error, runId: active.run.id }, 'could not renew the removal run heartbeat');
    }
  }
}

/** The reason columns of a run: the English text and, when it has one, its code and parameters. */
function runReason(reason: CodedText): Pick<RemovalRunEntity, 'reason' | 'reasonCoded'> {
  return { reason: reason.message, reasonCoded: bare(reason) };
}
