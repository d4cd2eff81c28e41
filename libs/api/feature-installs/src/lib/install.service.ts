import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import {
  type AgentChannel,
  AgentTokens,
  type InstallRunEntity,
  type InstallRunStore,
  type NodeEntity,
  type NodeStore,
  type ReasonText,
  reasonFields,
} from '@ccos/api/data-access-db';
import { type EventBus, type InstallProgressPayload, NotFoundError, PreconditionError, TOPICS } from '@ccos/api/util-graphql';
import { type InstallRunStatus, type InstallStep, SERVICE_FAILURE_CODES, describeStep, resumeStep, statusText, summariseSteps, verdictAllowsInstall } from '@ccos/shared/domain';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import { type InstallObserver, UNOBSERVED_INSTALLS } from './install-metrics';
import { IdentityNotMinted, type RunIdentityIssuer } from './run-bootstrap-identities';

/**
 * Starts and stops the agent on a host (over SSH). Throws an error whose message says what went wrong.
 * `kubeletBootstrapToken` is the run's own bootstrap identity, for the kubelet's bootstrap kubeconfig.
 */
export interface AgentControl {
  /** How agents started now reach the service (recorded on each run). */
  readonly channel: AgentChannel;
  launch(node: NodeEntity, run: InstallRunEntity, token: string, kubeletBootstrapToken: string): Promise<void>;
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

/**
 * Starting a run's agent belongs to one replica at a time (`launch_owner`, renewed every
 * `heartbeatMs`); a launch whose owner stopped renewing for `staleAfterMs` (the replica died
 * between answering installNode and starting the agent) is taken over by another replica.
 */
export interface LaunchClaims {
  /** This replica in `install_runs.launch_owner`; default `<hostname>#<pid>`. */
  readonly identity?: string;
  /** Default 5 s. */
  readonly heartbeatMs?: number;
  /** Default 20 s. */
  readonly staleAfterMs?: number;
}

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
  constructor(
    private readonly runs: InstallRunStore,
    private readonly nodes: NodeStore,
    private readonly tokens: AgentTokens,
    private readonly agent: AgentControl,
    private readonly identities: RunIdentityIssuer,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly deadlineMs: number = DEFAULT_INSTALL_RUN_DEADLINE_MS,
    private readonly observer: InstallObserver = UNOBSERVED_INSTALLS,
    claims: LaunchClaims = {},
    private readonly readiness: InstallReadiness = async () => undefined,
  ) {
    this.identity = claims.identity ?? `${hostname()}#${process.pid}`;
    this.heartbeatMs = claims.heartbeatMs ?? 5_000;
    this.staleAfterMs = claims.staleAfterMs ?? 20_000;
  }

  private readonly identity: string;
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;

  /**
   * Starts, with a new agent token, the agents of RUNNING runs whose launch was abandoned: nobody
   * recorded it started and its owner's heartbeat is stale. An agent the dead replica may have
   * started after all is stopped first (it holds the old token); its spool keeps the events and
   * their numbers, so the new one carries on where it was. Returns how many were taken over.
   */
  async relaunchAbandoned(): Promise<number> {
    const claimed = await this.runs.claimAbandonedLaunches(this.identity, this.staleAfterMs / 1000);
    for (const { id, previous } of claimed) {
      const run = await this.runs.get(id);
      const node = await this.nodes.get(run.nodeId);
      this.logger.warn({ runId: id, nodeId: node.id, previousOwner: previous }, 'taking over the start of an agent another replica did not finish');
      await this.agent.stop(node, run).catch(() => undefined);
      const { token, hash } = this.tokens.issue();
      await this.runs.replaceTokenWhileRunning(id, hash);
      await this.launch(node, { ...run, agentTokenHash: hash }, token);
    }
    return claimed.length;
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
        // A stalled agent may come back: stop it so two agents never work on one host.
        await this.agent.stop(node, previous).catch((error: unknown) => this.logger.warn({ err: error, runId: previous.id }, 'could not stop the stalled agent'));
        await this.finish(previous, 'FAILED', null, message('install.supersededByRetry'), SERVICE_FAILURE_CODES.superseded);
      }
      const events = await this.runs.events.list(previous.id);
      from = resumeStep(summariseSteps(events.map((event) => ({ ...event, at: event.occurredAt }))), previous.startStep) ?? previous.startStep;
    }
    return this.start(node, from, actor, 'INSTALL_RETRIED');
  }

  async cancel(nodeId: string, actor: string): Promise<InstallRunEntity> {
    const node = await this.nodes.get(nodeId);
    const run = await this.latestRun(node.id);
    if (!run || run.status !== 'RUNNING') {
      throw new PreconditionError(message('install.notRunning', { hostname: node.hostname }));
    }
    // End the run first: the agent's own "cancelled" report then changes nothing.
    await this.runs.requestCancel(run.id);
    const finished = await this.finish(run, 'CANCELLED', null, message('install.cancelledBy', { actor }), SERVICE_FAILURE_CODES.cancelled);
    await this.nodes.transition(node.id, 'INSTALL_CANCELLED', message('node.installCancelled', { actor }));
    await this.agent.stop(node, run).catch((error: unknown) =>
      this.logger.warn({ err: error, runId: run.id }, 'could not stop the agent; it stops at its next report'),
    );
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
    if (ended) {
      this.observer.runFinished(status, failureCode);
    }
    const finished = await this.runs.get(run.id);
    this.publishRun(finished);
    // Not awaited by the caller's answer: the sweeper revokes it later if the cluster does not answer now.
    void this.identities.revoke(finished).catch((error: unknown) => this.logger.warn({ err: error, runId: run.id }, 'could not revoke the run\'s bootstrap identity yet'));
    return finished;
  }

  publishRun(run: InstallRunEntity, seq = 0): void {
    const payload: InstallProgressPayload = { nodeId: run.nodeId, runId: run.id, seq, step: null, status: null, runStatus: run.status };
    this.bus.publish(TOPICS.INSTALL_PROGRESS, run.nodeId, payload);
  }

  private async start(node: NodeEntity, from: InstallStep, actor: string, event: 'INSTALL_STARTED' | 'INSTALL_RETRIED'): Promise<InstallRunEntity> {
    const { token, hash } = this.tokens.issue();
    const deadlineAt = new Date(Date.now() + this.deadlineMs);
    const run = await this.runs.insert({
      id: randomUUID(), nodeId: node.id, status: 'RUNNING', agentTokenHash: hash, agentTokenExpiresAt: deadlineAt, deadlineAt, startStep: from, requestedBy: actor,
      agentChannel: this.agent.channel, launchOwner: this.identity, launchHeartbeatAt: new Date(),
    });
    try {
      await this.nodes.transition(node.id, event, from === 'PREFLIGHT' ? message('node.startingAgent') : message('node.startingAgentAt', { step: bare(describeStep(from).title) }));
    } catch (error) {
      await this.runs.delete(run.id);
      throw error;
    }
    this.publishRun(run);
    if (run.agentChannel === 'PLAIN_HTTP') {
      this.logger.warn({ nodeId: node.id, runId: run.id }, 'this install run\'s agent reaches the service over plain HTTP (AGENT_PLAIN_HTTP=allow)');
    }
    void this.launch(node, run, token);
    return run;
  }

  private async launch(node: NodeEntity, run: InstallRunEntity, token: string): Promise<void> {
    const heartbeat = setInterval(() => {
      void this.runs
        .renewLaunch(run.id, this.identity, new Date())
        .catch((error: unknown) => this.logger.debug({ err: error, runId: run.id }, 'could not renew the launch claim'));
    }, this.heartbeatMs);
    heartbeat.unref();
    try {
      // Before anything runs on the host: without an identity of its own the kubelet could only use the shared one.
      const identity = await this.identities.mint(node, run);
      await this.agent.launch(node, run, token, identity.token);
      await this.runs.launched(run.id, new Date());
      this.logger.info({ nodeId: node.id, runId: run.id, startStep: run.startStep }, 'agent started');
    } catch (error) {
      const failure: LaunchFailure = error instanceof IdentityNotMinted ? { message: error.message, kind: 'OTHER' } : (error as LaunchFailure);
      this.logger.warn({ nodeId: node.id, runId: run.id, kind: failure.kind, reason: failure.message }, 'could not start the agent');
      const reason =
        error instanceof IdentityNotMinted
          ? message('install.identityNotMinted', { error: error.detail })
          : message('install.agentNotStarted', { error: failure.coded ? bare(failure.coded) : failure.message });
      await this.finish(run, 'FAILED', null, reason, SERVICE_FAILURE_CODES.agentNotStarted);
      const current = await this.nodes.get(node.id);
      if (current.status !== 'INSTALLING') {
        return;
      }
      if (failure.kind === 'HOST_KEY_CHANGED') {
        await this.nodes.transition(node.id, 'HOST_KEY_MISMATCH', reason, { offeredHostKeyFingerprint: failure.offeredFingerprint ?? null });
      } else if (failure.kind === 'AUTH_FAILED') {
        await this.nodes.transition(node.id, 'SSH_AUTH_FAILED', reason);
      } else {
        await this.nodes.transition(node.id, 'INSTALL_FAILED', reason);
      }
    } finally {
      clearInterval(heartbeat);
    }
  }
}

