import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { NodeStore, RemovalBlockingPod, RemovalDecision, RemovalDecisionKind, RemovalRunEntity, RemovalRunProgress, RemovalRunStore } from '@ccos/api/data-access-db';
import { nextRemovalPhase, removalCancellable } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import { type Clock, SystemClock } from '@ccos/shared/util-timing';
import type { RemovalPhaseRegistry } from './phases/phase-registry';
import { errorText, type RemovalPhaseContext } from './phases/removal-phase';
import type { RemovalEventInput, RemovalLog, RunEventWriter } from './removal-log';
import type { RemovalObserver } from './removal-ports';

export interface RemovalRunnerOptions {
  /** This replica in `removal_runs.owner`; default `<hostname>#<pid>`. */
  readonly identity?: string;
  /** How often the executing replica renews its claim and looks for a cancel from another replica. Default 5 s. */
  readonly heartbeatMs?: number;
  /** A RUNNING run whose heartbeat is older than this is taken over. Default 15 s. */
  readonly staleAfterMs?: number;
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

/** Another replica took the run over (this one looked dead to it): stop without touching the run or the node. */
class RunTakenOver extends Error {
  override readonly name = 'RunTakenOver';
}

interface ActiveRun {
  run: RemovalRunEntity;
  readonly writer: RunEventWriter;
  /** Aborts the drain: an operator's cancel, or this replica shutting down. */
  readonly abort: AbortController;
  cancelled: boolean;
  /** The heartbeat found the run no longer ours. */
  lost: boolean;
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
 * A run belongs to one replica at a time (`owner`, renewed by a heartbeat); a run whose owner
 * stopped renewing — the service was restarted or a replica died — is taken over and continues
 * at its phase (the drain cordons again and evicts what is left). The Node is deleted only after
 * a finished drain and a stopped (or unreachable) kubelet.
 */
export class RemovalRunner {
  readonly identity: string;
  private readonly active = new Map<string, ActiveRun>();
  private readonly log: Logger;
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly clock: Clock;
  /** Ends the sweep loop and every run's heartbeat loop. */
  private readonly stopped = new AbortController();
  private stopping = false;

  constructor(
    private readonly runs: RemovalRunStore,
    private readonly nodes: NodeStore,
    private readonly phases: RemovalPhaseRegistry,
    private readonly events: RemovalLog,
    logger: Logger,
    private readonly options: RemovalRunnerOptions = {},
  ) {
    this.identity = options.identity ?? `${hostname()}#${process.pid}`;
    this.heartbeatMs = options.heartbeatMs ?? 5000;
    this.staleAfterMs = options.staleAfterMs ?? 15_000;
    this.clock = options.clock ?? new SystemClock();
    this.log = logger.child({ component: 'removal-runner' });
  }

  /** Resumes the runs a restart interrupted, then keeps looking for runs whose replica died. */
  async start(): Promise<number> {
    const resumed = await this.adoptOrphans(true);
    void this.every(this.stopped.signal, () => this.adoptOrphans(false).catch((error: unknown) => this.log.warn({ err: error }, 'could not look for abandoned removal runs')));
    return resumed;
  }

  /**
   * Stops executing, and hands the runs it executed back: their owner is cleared, so another
   * replica's next sweep (or this service's next start) resumes them at once instead of after
   * staleAfterMs. Returns how many were handed back.
   */
  async stop(): Promise<number> {
    this.stopping = true;
    this.stopped.abort();
    for (const active of this.active.values()) {
      active.abort.abort();
    }
    await Promise.all([...this.active.values()].map((active) => active.done));
    const released = await this.runs.release(this.identity).catch((error: unknown) => {
      this.log.warn({ err: error }, 'could not hand the removal runs over; another replica takes them once their heartbeat is stale');
      return [];
    });
    if (released.length > 0) {
      this.log.info({ runs: released }, 'handed removal runs over to the other replicas');
    }
    return released.length;
  }

  /** Starts executing a run this replica owns. */
  async launch(run: RemovalRunEntity, resumed: boolean): Promise<void> {
    // Each event is tagged with the phase the run is in as it is recorded (this replica's view of the run, kept by save()).
    const writer = await this.events.writer(run, () => active.run.phase);
    const active: ActiveRun = { run, writer, abort: new AbortController(), cancelled: false, lost: false, nodeGone: false, blockedSince: null, hostSkip: new AbortController(), forceDrain: new AbortController(), blockerWrites: Promise.resolve(), done: Promise.resolve() };
    this.active.set(run.id, active);
    active.done = this.execute(active, resumed).finally(() => this.active.delete(run.id));
  }

  /** Drains executing on this replica that PodDisruptionBudgets hold now. */
  blockedDrains(): BlockedDrain[] {
    return [...this.active.values()]
      .filter((active) => active.blockedSince !== null)
      .map((active) => ({ clusterId: active.run.clusterId, nodeName: active.run.nodeName, since: active.blockedSince ?? 0, timeoutSeconds: active.run.options.timeoutSeconds }));
  }

  /** Cancels the drain of a run executing here; false when it runs elsewhere (its heartbeat notices the flag). */
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

  /** Applies an operator's decision to a run executing here; false when it does not run here (its heartbeat reads the request). */
  decideLocal(runId: string, kind: RemovalDecisionKind, decision: RemovalDecision): boolean {
    const active = this.active.get(runId);
    if (!active) {
      return false;
    }
    this.markDecided(active, kind, decision);
    return true;
  }

  /** Resolves when a run executing here ends (at once when it does not run here). */
  async settled(runId: string): Promise<void> {
    await this.active.get(runId)?.done;
  }

  /**
   * Claims RUNNING runs nobody executes: a heartbeat older than staleAfterMs, no owner, or (at
   * start) an owner on this host, i.e. this service before its restart.
   */
  async adoptOrphans(atStart: boolean): Promise<number> {
    if (this.stopping) {
      return 0;
    }
    const host = this.identity.split('#')[0];
    const claimed = await this.runs.claimOrphans(this.identity, { except: [...this.active.keys()], staleAfterSeconds: this.staleAfterMs / 1000, sameHost: atStart ? host : null });
    for (const id of claimed) {
      const run = await this.runs.get(id);
      this.log.info({ runId: id, nodeId: run.nodeId, phase: run.phase, previousOwner: run.owner }, 'resuming a removal run');
      await this.launch(run, true);
    }
    return claimed.length;
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
      if (JSON.stringify(active.run.blocker) !== JSON.stringify(blocker) && !this.stopping && !active.lost) {
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
        if (this.stopping || active.lost) {
          return;
        }
        phase = nextRemovalPhase(phase, active.run.options.cleanHost);
        await active.blockerWrites;
        await this.save(active, { phase, blocker: null, blockerSince: null });
      }
      await this.succeed(active);
    } catch (error) {
      if (this.stopping || error instanceof RunTakenOver) {
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
      interrupted: () => this.stopping || active.lost,
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
   * Updates the run while this replica owns it; a run taken over by another replica is left to it.
   * A run that ends has its whole log stored, closing event included, before its final status is
   * written: whoever reads the final status (a follower that then stops) can read every event.
   */
  private async save(active: ActiveRun, fields: RemovalRunProgress, closing?: RemovalEventInput): Promise<void> {
    if (closing) {
      active.writer.add({ ...closing, phase: fields.phase ?? active.run.phase });
      await active.writer.flush();
    }
    if (!(await this.runs.updateOwned(active.run.id, this.identity, fields))) {
      throw new RunTakenOver(`removal run ${active.run.id} is no longer this replica's (taken over or ended)`);
    }
    if (fields.status && fields.status !== 'RUNNING') {
      this.options.observer?.runFinished(fields.status);
    }
    active.run = await this.runs.get(active.run.id);
    active.writer.announce();
  }

  /** Throws RunTakenOver unless this replica still executes the run. */
  private async assertOwned(active: ActiveRun): Promise<void> {
    if (!(await this.runs.isOwnedBy(active.run.id, this.identity))) {
      throw new RunTakenOver(`removal run ${active.run.id} is no longer this replica's (taken over or ended)`);
    }
  }

  /** Renews the claim; notices a cancel requested on another replica, or that the run was taken over. */
  private async beat(active: ActiveRun): Promise<void> {
    try {
      const beat = await this.runs.heartbeat(active.run.id, this.identity);
      if (!beat) {
        // Ended here meanwhile, or taken over by a replica that found our heartbeat stale.
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
