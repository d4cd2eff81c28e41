import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import {
  type AgentChannel,
  AgentTokens,
  type InstallRunEntity,
  type InstallRunStore,
  type JobContext,
  type JobRegistry,
  type NodeEntity,
  type NodeStore,
  type ReasonText,
  hostQueue,
  reasonFields,
} from '@ccos/api/data-access-db';
import { NotFoundError, PreconditionError } from '@ccos/api/util-graphql';
import { type InstallRunStatus, type InstallStep, SERVICE_FAILURE_CODES, describeStep, resumeStep, statusText, summariseSteps, verdictAllowsInstall } from '@ccos/shared/domain';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import type { InstallObserver } from './install-metrics';
import type { InstallProgress } from './install-progress';
import { IdentityNotMinted, type RunIdentityIssuer } from './run-bootstrap-identities';

/**
 * Starts and stops the agent on a host (over SSH). Throws an error whose message says what went wrong.
 * `kubeletBootstrapToken` is the run's own bootstrap identity, for the kubelet's bootstrap kubeconfig.
 */
export interface AgentControl {
  /** How agents started now reach the service (recorded on each run). */
  readonly channel: AgentChannel;
  /** `kubeletBootstrapToken` is null for an apply run (its node has its own certificates). */
  launch(node: NodeEntity, run: InstallRunEntity, token: string, kubeletBootstrapToken: string | null): Promise<void>;
  stop(node: NodeEntity, run: InstallRunEntity): Promise<void>;
}

/**
 * Checked before a run is created: throws (FAILED_PRECONDITION, naming what is missing) when the
 * node's cluster still fails a readiness check or has no complete artifact set, so an install is
 * refused up front instead of failing at launch or at DOWNLOAD_BINARIES.
 */
export type InstallReadiness = (clusterId: string) => Promise<void>;

/** How long an install run may take, unless configured: its agent token and bootstrap identity end with it. */
export const DEFAULT_INSTALL_RUN_DEADLINE_MS = 120 * 60_000;

/** The durable job that starts a run's agent on its host (payload: the run's id; never its token). */
export const INSTALL_LAUNCH_TASK = 'install.launch';
/** Attempts of a launch job: a host's own failure ends the run, so only the unexpected is tried again. */
const LAUNCH_ATTEMPTS = 3;
/** The job that stops a run's agent over SSH (payload: `runId`), on a worker: a cancel, a retry, a deadline. */
export const STOP_AGENT_TASK = 'install.stop-agent';
const STOP_AGENT_ATTEMPTS = 3;
/**
 * Runs one process creates at a time. A join storm (an autoscaler asking for hundreds of hosts at
 * once) then waits here, without a time limit, instead of in the database pool's queue, whose wait
 * is limited and which every other request of the process needs too.
 */
const RUNS_CREATED_AT_ONCE = 4;

/** What a failed launch means for the node: SSH trouble has its own statuses. */
export interface LaunchFailure {
  readonly message: string;
  /** The failure as a coded message, when the service worded it. */
  readonly coded?: CodedText;
  readonly kind?: 'AUTH_FAILED' | 'HOST_KEY_CHANGED' | 'UNREACHABLE' | 'OTHER';
  readonly offeredFingerprint?: string;
}

/**
 * Install runs (the seed's 安装节点): one run at a time per node, each with its own one-run
 * agent token and bootstrap identity, both ending with the run (or its deadline); a retry
 * resumes at the first step that did not succeed.
 */
export class InstallService {
  private readonly creating = pLimit(RUNS_CREATED_AT_ONCE);

  constructor(
    private readonly runs: InstallRunStore,
    private readonly nodes: NodeStore,
    private readonly tokens: AgentTokens,
    private readonly agent: AgentControl,
    private readonly identities: RunIdentityIssuer,
    private readonly progress: InstallProgress,
    private readonly logger: Logger,
    private readonly deadlineMs: number = DEFAULT_INSTALL_RUN_DEADLINE_MS,
    private readonly observer: InstallObserver,
    private readonly jobs: JobRegistry,
    private readonly readiness: InstallReadiness = async () => undefined,
  ) {
    jobs.register(INSTALL_LAUNCH_TASK, (payload, context) => this.launchJob(String(payload['runId']), context));
    jobs.register(STOP_AGENT_TASK, (payload, context) => this.stopAgentJob(String(payload['runId']), context));
  }

  /**
   * Has a worker stop the run's agent, on the host's queue: after any start of it still waiting
   * there, before a later run's. An agent that is not stopped (its host does not answer) stops
   * itself at its next report, which the ended run refuses.
   */
  stopAgent(node: NodeEntity, run: Pick<InstallRunEntity, 'id'>): Promise<void> {
    return this.jobs.enqueue(STOP_AGENT_TASK, { runId: run.id, nodeId: node.id, hostname: node.hostname }, { key: `${STOP_AGENT_TASK}:${run.id}`, queue: hostQueue(node.ip ?? node.hostname), maxAttempts: STOP_AGENT_ATTEMPTS });
  }

  private async stopAgentJob(runId: string, context: JobContext): Promise<void> {
    const run = await this.runs.find(runId);
    const node = run ? await this.nodes.find(run.nodeId) : null;
    if (!run || !node) {
      return;
    }
    try {
      await this.agent.stop(node, run);
    } catch (error) {
      if (context.attempt < context.maxAttempts) {
        throw error;
      }
      this.logger.warn({ err: error, runId }, 'could not stop the agent; it stops at its next report');
    }
  }

  async install(nodeId: string, actor: string): Promise<InstallRunEntity> {
    const node = await this.nodes.get(nodeId);
    if (node.status !== 'READY_TO_INSTALL') {
      throw new PreconditionError(message('install.needsReady', { hostname: node.hostname, status: statusText(node.status) }), { status: node.status });
    }
    if (!verdictAllowsInstall(node.hostVerdict)) {
      throw new PreconditionError(message('install.blockedByLeftovers', { hostname: node.hostname, reason: node.hostVerdict?.reasonCoded ?? node.hostVerdict?.reason ?? bare(message('install.hostHasLeftovers')) }), { verdict: node.hostVerdict?.verdict });
    }
    await this.readiness(node.clusterId);
    return this.start(node, 'PREFLIGHT', actor, 'INSTALL_STARTED');
  }

  async retry(nodeId: string, actor: string): Promise<InstallRunEntity> {
    const node = await this.nodes.get(nodeId);
    if (node.status !== 'INSTALL_FAILED' && node.status !== 'STALLED') {
      throw new PreconditionError(message('install.retryNeedsFailure', { hostname: node.hostname, status: statusText(node.status) }), { status: node.status });
    }
    await this.readiness(node.clusterId);
    const previous = await this.latestRun(node.id);
    let from: InstallStep = 'PREFLIGHT';
    if (previous) {
      if (previous.status === 'RUNNING') {
        // A stalled agent may come back: stopped (before the new run's agent starts, on the host's queue) so two agents never work on one host.
        await this.stopAgent(node, previous);
        await this.finish(previous, 'FAILED', null, message('install.supersededByRetry'), SERVICE_FAILURE_CODES.superseded);
      }
      const events = await this.runs.events.list(previous.id);
      from = resumeStep(summariseSteps(events.map((event) => ({ ...event, at: event.occurredAt }))), previous.startStep) ?? previous.startStep;
    }
    return this.start(node, from, actor, 'INSTALL_RETRIED');
  }

  /**
   * An apply run: the agent re-runs `steps` on a node that joined (a rollout's UPGRADE or REAPPLY),
   * with no bootstrap identity (the node has its certificates) and no install slot (the rollout's
   * budget holds it); the node stays JOINED whatever the run does. Its agent is started here, by
   * the caller, which holds the host's queue already (a launch job would wait behind it). The
   * node's apply run still running is the one returned, so a rollout job that starts again never
   * starts a second agent (one it had not started yet is started then, after stopping any an
   * earlier attempt may have left).
   */
  async apply(nodeId: string, steps: readonly InstallStep[], actor: string, lost: AbortSignal = new AbortController().signal): Promise<InstallRunEntity> {
    const node = await this.nodes.get(nodeId);
    if (node.status !== 'JOINED') {
      throw new PreconditionError(message('install.applyNeedsJoined', { hostname: node.hostname, status: statusText(node.status) }), { status: node.status });
    }
    const running = await this.latestRun(node.id);
    if (running?.status === 'RUNNING') {
      if (running.purpose !== 'APPLY') {
        throw new PreconditionError(message('install.applyWhileInstalling', { hostname: node.hostname }));
      }
      await this.launchOnce(running.id, { again: true, lost });
      return this.runs.get(running.id);
    }
    const first = steps[0];
    if (first === undefined || steps.at(-1) !== 'START_KUBELET' || steps.includes('PREFLIGHT')) {
      throw new Error(`an apply run ends with START_KUBELET and never runs PREFLIGHT (got ${steps.join(', ')})`);
    }
    const unusable = this.tokens.issue();
    const now = new Date();
    const deadlineAt = new Date(now.getTime() + this.deadlineMs);
    const run = await this.runs.insert({
      id: randomUUID(), nodeId: node.id, status: 'RUNNING', agentTokenHash: unusable.hash, agentTokenExpiresAt: deadlineAt, deadlineAt, startStep: first, requestedBy: actor,
      agentChannel: this.agent.channel, admittedAt: now, purpose: 'APPLY', steps: [...steps],
    });
    this.publishRun(run);
    await this.launchOnce(run.id, { again: false, lost });
    return this.runs.get(run.id);
  }

  async cancel(nodeId: string, actor: string): Promise<InstallRunEntity> {
    const node = await this.nodes.get(nodeId);
    const run = await this.latestRun(node.id);
    if (!run || run.status !== 'RUNNING' || run.purpose === 'APPLY') {
      throw new PreconditionError(message('install.notRunning', { hostname: node.hostname }));
    }
    // End the run first: the agent's own "cancelled" report then changes nothing.
    await this.runs.requestCancel(run.id);
    const finished = await this.finish(run, 'CANCELLED', null, message('install.cancelledBy', { actor }), SERVICE_FAILURE_CODES.cancelled);
    await this.nodes.transition(node.id, 'INSTALL_CANCELLED', message('node.installCancelled', { actor }));
    await this.stopAgent(node, run).catch((error: unknown) => this.logger.warn({ err: error, runId: run.id }, 'could not queue the stop of the agent; it stops at its next report'));
    return finished;
  }

  async runsOf(nodeId: string): Promise<InstallRunEntity[]> {
    return this.runs.ofNode(nodeId);
  }

  async run(id: string): Promise<InstallRunEntity> {
    const run = await this.runs.find(id);
    if (!run) {
      throw new NotFoundError('install run', id);
    }
    return run;
  }

  latestRun(nodeId: string): Promise<InstallRunEntity | null> {
    return this.runs.latestOf(nodeId);
  }

  /**
   * Ends a run: its agent token keeps working a little longer for the agent's last words (never
   * past the deadline), its bootstrap identity is revoked. `failureCode` labels the outcome in
   * the metrics; it is counted only by the call that ended the run (a run ends once).
   */
  async finish(
    run: InstallRunEntity,
    status: Exclude<InstallRunStatus, 'RUNNING'>,
    failedStep: InstallStep | null,
    reason: ReasonText | null,
    failureCode: string = SERVICE_FAILURE_CODES.none,
  ): Promise<InstallRunEntity> {
    const now = new Date();
    const current = await this.runs.get(run.id);
    const ended = await this.runs.end(run.id, {
      status, failedStep, reason: reasonFields(reason).statusReason, reasonCoded: reasonFields(reason).statusReasonCoded, finishedAt: now, agentTokenExpiresAt: AgentTokens.expiryAfterEnd(now, current.deadlineAt),
    });
    // Installs are counted; an apply run is a rollout's, counted with its rollout's nodes.
    if (ended && run.purpose !== 'APPLY') {
      this.observer.runFinished(status, failureCode);
    }
    const finished = await this.runs.get(run.id);
    this.publishRun(finished);
    if (ended) {
      // Its slot is free: the next run waiting in its cluster's line starts (the sweeper tries again if this fails).
      void this.runs
        .clusterOf(finished)
        .then((clusterId) => (clusterId ? this.admitWaiting(clusterId) : undefined))
        .catch((error: unknown) => this.logger.warn({ err: error, runId: run.id }, 'could not start the next waiting install yet'));
    }
    // Not awaited by the caller's answer: the sweeper revokes it later if the cluster does not answer now.
    void this.identities.revoke(finished).catch((error: unknown) => this.logger.warn({ err: error, runId: run.id }, 'could not revoke the run\'s bootstrap identity yet'));
    return finished;
  }

  /** Tells the node's install-progress followers that the run changed. */
  publishRun(run: InstallRunEntity, seq = 0): void {
    this.progress.runChanged(run, seq);
  }

  private start(node: NodeEntity, from: InstallStep, actor: string, event: 'INSTALL_STARTED' | 'INSTALL_RETRIED'): Promise<InstallRunEntity> {
    return this.creating(() => this.createRun(node, from, actor, event));
  }

  private async createRun(node: NodeEntity, from: InstallStep, actor: string, event: 'INSTALL_STARTED' | 'INSTALL_RETRIED'): Promise<InstallRunEntity> {
    // The agent's token is issued when its job starts it: a job's payload is stored as it is.
    const unusable = this.tokens.issue();
    const deadlineAt = new Date(Date.now() + this.deadlineMs);
    const run = await this.runs.insert({
      id: randomUUID(), nodeId: node.id, status: 'RUNNING', agentTokenHash: unusable.hash, agentTokenExpiresAt: deadlineAt, deadlineAt, startStep: from, requestedBy: actor,
      agentChannel: this.agent.channel, admittedAt: null,
    });
    try {
      await this.nodes.transition(node.id, event, startingReason(from));
    } catch (error) {
      await this.runs.delete(run.id);
      throw error;
    }
    if (run.agentChannel === 'PLAIN_HTTP') {
      this.logger.warn({ nodeId: node.id, runId: run.id }, 'this install run\'s agent reaches the service over plain HTTP (AGENT_PLAIN_HTTP=allow)');
    }
    const { admitted, limit } = await this.admit(node.clusterId);
    if (admitted.some((started) => started.id === run.id)) {
      return this.runs.get(run.id);
    }
    await this.nodes.updateWhile(node.id, 'INSTALLING', reasonFields(message('node.waitingForInstallSlot', { limit })), { runWaiting: run.id });
    this.publishRun(run);
    return run;
  }

  /**
   * Starts as many of the cluster's waiting runs as it has install slots free (its
   * `installsAtOnce`), oldest request first: each gets its deadline from now and its launch job.
   * Called when a run is asked for, when one ends, when the limit changes, and by the sweeper. The
   * runs started.
   */
  async admitWaiting(clusterId: string): Promise<InstallRunEntity[]> {
    return (await this.admit(clusterId)).admitted;
  }

  private async admit(clusterId: string): Promise<{ readonly admitted: InstallRunEntity[]; readonly limit: number }> {
    const admission = await this.runs.admitWaiting(clusterId, new Date(), this.deadlineMs);
    for (const run of admission.admitted) {
      // One run's trouble (its node deleted meanwhile) does not keep the others from starting; an admitted run whose launch was never queued is queued at the next start (resumeLaunches).
      await this.startAdmitted(run).catch((error: unknown) => this.logger.warn({ err: error, runId: run.id }, 'could not start an admitted install run'));
    }
    return admission;
  }

  private async startAdmitted(run: InstallRunEntity): Promise<void> {
    const node = await this.nodes.get(run.nodeId);
    // A run admitted by the request that started it already says so; only a node shown waiting is told again.
    await this.nodes.updateWhile(node.id, 'INSTALLING', reasonFields(startingReason(run.startStep)), { reasonCode: 'node.waitingForInstallSlot' });
    this.publishRun(run);
    try {
      await this.queueLaunch(node, run);
    } catch (error) {
      await this.launchFailed(node, run, error);
    }
  }

  /** Admits the waiting runs of every cluster that has some (after a restart, or an admission that failed). Their number. */
  async admitAllWaiting(): Promise<number> {
    let admitted = 0;
    for (const clusterId of await this.runs.clustersWithWaitingRuns()) {
      admitted += (await this.admitWaiting(clusterId)).length;
    }
    return admitted;
  }

  /**
   * Queues the launch of every run whose agent has not started (a job already waiting for one
   * stays the one job): runs started before launches were jobs, or whose job could not be queued.
   * Their number.
   */
  async resumeLaunches(): Promise<number> {
    const waiting = await this.runs.notLaunched();
    for (const run of waiting) {
      const node = await this.nodes.get(run.nodeId);
      await this.queueLaunch(node, run);
    }
    return waiting.length;
  }

  private queueLaunch(node: NodeEntity, run: InstallRunEntity): Promise<void> {
    return this.jobs.enqueue(INSTALL_LAUNCH_TASK, { runId: run.id, nodeId: node.id, hostname: node.hostname }, { key: `${INSTALL_LAUNCH_TASK}:${run.id}`, queue: hostQueue(node.ip ?? node.hostname), maxAttempts: LAUNCH_ATTEMPTS });
  }

  /**
   * The launch job: starts the run's agent with a token issued now, on whichever worker took the
   * job, once. A run that ended meanwhile (cancelled) or whose agent started or reported already is
   * left alone; an attempt after another one (its worker died, or it failed unexpectedly) first
   * stops an agent that attempt may have started, which holds the earlier token: its spool keeps
   * the events and their numbers, so the new agent carries on where it was.
   */
  private async launchJob(runId: string, context: JobContext): Promise<void> {
    await this.launchOnce(runId, { again: context.attempt > 1, lost: context.lost });
  }

  /** Starts the agent of a run not started yet; `again` after an attempt that may have started one (it is stopped first). */
  private async launchOnce(runId: string, { again, lost }: { readonly again: boolean; readonly lost: AbortSignal }): Promise<void> {
    const run = await this.runs.find(runId);
    if (!run || run.status !== 'RUNNING' || run.agentLaunchedAt !== null) {
      return;
    }
    const node = await this.nodes.get(run.nodeId);
    if (again) {
      this.logger.warn({ runId, nodeId: node.id }, 'starting the agent again: an earlier attempt did not finish');
      await this.agent.stop(node, run).catch(() => undefined);
    }
    // Another worker was given this job (this one was declared dead): it starts the agent, not this one.
    if (lost.aborted) {
      return;
    }
    const { token, hash } = this.tokens.issue();
    if (!(await this.runs.replaceTokenBeforeLaunch(runId, hash))) {
      return;
    }
    await this.launch(node, { ...run, agentTokenHash: hash }, token, lost);
  }

  private async launch(node: NodeEntity, run: InstallRunEntity, token: string, lost: AbortSignal): Promise<void> {
    try {
      // Before anything runs on the host: without an identity of its own the kubelet could only use the shared one.
      // A joined node's kubelet has its own certificates: an apply run mints none.
      const identity = run.purpose === 'APPLY' ? null : await this.identities.mint(node, run);
      if (lost.aborted) {
        this.logger.warn({ nodeId: node.id, runId: run.id }, 'not starting the agent: another worker was given its job');
        return;
      }
      await this.agent.launch(node, run, token, identity?.token ?? null);
      await this.runs.launched(run.id, new Date());
      this.logger.info({ nodeId: node.id, runId: run.id, startStep: run.startStep }, 'agent started');
    } catch (error) {
      await this.launchFailed(node, run, error);
    }
  }

  /** The run ends FAILED and the node follows (SSH trouble has its own statuses). */
  private async launchFailed(node: NodeEntity, run: InstallRunEntity, error: unknown): Promise<void> {
    const failure: LaunchFailure = error instanceof IdentityNotMinted ? { message: error.message, kind: 'OTHER' } : (error as LaunchFailure);
    this.logger.warn({ nodeId: node.id, runId: run.id, kind: failure.kind, reason: failure.message }, 'could not start the agent');
    const reason =
      error instanceof IdentityNotMinted
        ? message('install.identityNotMinted', { error: error.detail })
        : message('install.agentNotStarted', { error: failure.coded ? bare(failure.coded) : failure.message });
    await this.finish(run, 'FAILED', null, reason, SERVICE_FAILURE_CODES.agentNotStarted);
    const current = await this.nodes.get(node.id);
    if (current.status !== 'INSTALLING' || run.purpose === 'APPLY') {
      return;
    }
    if (failure.kind === 'HOST_KEY_CHANGED') {
      await this.nodes.transition(node.id, 'HOST_KEY_MISMATCH', reason, { offeredHostKeyFingerprint: failure.offeredFingerprint ?? null });
    } else if (failure.kind === 'AUTH_FAILED') {
      await this.nodes.transition(node.id, 'SSH_AUTH_FAILED', reason);
    } else {
      await this.nodes.transition(node.id, 'INSTALL_FAILED', reason);
    }
  }
}

/** What the node says while its agent is being started: from the beginning, or from the step a retry resumes at. */
function startingReason(from: InstallStep): ReasonText {
  return from === 'PREFLIGHT' ? message('node.startingAgent') : message('node.startingAgentAt', { step: bare(describeStep(from).title) });
}
