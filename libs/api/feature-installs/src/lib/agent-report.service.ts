import type { Logger } from 'pino';
import type { ClusterProbe } from '@ccos/api/data-access-cluster-connections';
import { type AgentTokens, type InstallRunEntity, type InstallRunStore, type NodeStore, reasonFields } from '@ccos/api/data-access-db';
import { type EventBus, type InstallProgressPayload, AppError, TOPICS } from '@ccos/api/util-graphql';
import { describeStep } from '@ccos/shared/domain';
import { bare, isMessageCode, type Message, type MessageParams, message } from '@ccos/shared/messages';
import { type InstallObserver, UNOBSERVED_INSTALLS, failureCodeOf } from './install-metrics';
import type { InstallService } from './install.service';
import { type AgentRunType, MAX_STEP_EVENTS_PER_RUN, type ReportStepInput, type ReportStepResultType, STEP_EVENT_RESERVE } from './report-step.input';

/**
 * The agent's side of an install: it reports step events (stored once per run and seq)
 * and asks what it needs to know. A run ends with its first FAILED event or with
 * START_KUBELET SUCCEEDED (the Node is Ready), and the node's status follows.
 */
export class AgentReportService {
  constructor(
    private readonly runs: InstallRunStore,
    private readonly tokens: AgentTokens,
    private readonly nodes: NodeStore,
    private readonly installs: InstallService,
    private readonly probe: ClusterProbe,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly observer: InstallObserver = UNOBSERVED_INSTALLS,
  ) {}

  async authenticate(token: string | null, runId?: string): Promise<InstallRunEntity> {
    const run = await this.tokens.authenticate(token);
    if (!run) {
      throw new AppError('UNAUTHENTICATED', message('agentToken.invalid'));
    }
    if (runId !== undefined && run.id !== runId) {
      throw new AppError('FORBIDDEN', message('agentToken.otherRun', { runId }));
    }
    return run;
  }

  async report(token: string | null, input: ReportStepInput): Promise<ReportStepResultType> {
    const run = await this.authenticate(token, input.runId);
    await this.checkEventLimit(run, input);
    const stored = await this.runs.events.append(run.id, [{
      seq: input.seq,
      step: input.step,
      status: input.status,
      progress: input.progress ?? null,
      message: input.message ?? null,
      messageCoded: eventMessageOf(input),
      detail: input.detail ?? null,
      occurredAt: input.occurredAt,
    }]);
    const duplicate = stored.length === 0;
    if (!duplicate) {
      // A metric that cannot be read must not keep the event from moving the run along.
      await this.observeStored(run, input).catch((error: unknown) => this.logger.warn({ err: error, runId: run.id, seq: input.seq }, 'could not time the step event for the metrics'));
      await this.runs.heardFrom(run.id, new Date());
      const payload: InstallProgressPayload = { nodeId: run.nodeId, runId: run.id, seq: input.seq, step: input.step, status: input.status, runStatus: null };
      this.bus.publish(TOPICS.INSTALL_PROGRESS, run.nodeId, payload);
      await this.follow(run, input).catch((error: unknown) => {
        // The event is stored; a node that moved on meanwhile (e.g. cancelled) keeps its status.
        this.logger.warn({ err: error, runId: run.id, seq: input.seq }, 'step event did not change the node');
      });
    }
    // The run as this request authenticated it: only an operator's cancel changes these two, and
    // reading them again a few milliseconds later cost one more query for every event.
    return { accepted: true, duplicate, cancelRequested: run.cancelRequested || run.status === 'CANCELLED' };
  }

  async agentRun(token: string | null): Promise<AgentRunType> {
    const run = await this.authenticate(token);
    const node = await this.nodes.get(run.nodeId);
    const [state, pendingCsrNames, conflicts] = await Promise.all([
      this.probe.nodeState(node.clusterId, node.hostname),
      this.probe.pendingCsrNames(node.clusterId, node.hostname),
      this.probe.conflicts(node.clusterId, node.hostname, node.ip),
    ]);
    return {
      runId: run.id,
      nodeName: node.hostname,
      serverTime: new Date(),
      hostnameConflict: conflicts.hostname?.message ?? null,
      hostnameConflictCode: conflicts.hostname?.code ?? null,
      hostnameConflictParams: conflicts.hostname ? { ...conflicts.hostname.params } : null,
      ipConflict: conflicts.ip?.message ?? null,
      ipConflictCode: conflicts.ip?.code ?? null,
      ipConflictParams: conflicts.ip ? { ...conflicts.ip.params } : null,
      nodeRegistered: state.registered,
      nodeReady: state.ready,
      pendingCsrNames,
      cancelRequested: run.cancelRequested || run.status === 'CANCELLED',
    };
  }

  /**
   * Refuses an event past the run's limit (LIMIT_EXCEEDED), unless it was stored before (a
   * re-send is answered as a duplicate). PROGRESS events stop first, so STARTED, SUCCEEDED
   * and FAILED still fit and the run can finish.
   */
  private async checkEventLimit(run: InstallRunEntity, input: ReportStepInput): Promise<void> {
    const limit = input.status === 'PROGRESS' ? MAX_STEP_EVENTS_PER_RUN : MAX_STEP_EVENTS_PER_RUN + STEP_EVENT_RESERVE;
    const stored = await this.runs.events.count(run.id);
    if (stored < limit || (await this.runs.events.has(run.id, input.seq))) {
      return;
    }
    throw new AppError(
      'LIMIT_EXCEEDED',
      message('agentToken.eventLimit', { runId: run.id, stored: String(stored), progress: String(input.status === 'PROGRESS'), status: input.status, step: input.step }),
      { limit },
    );
  }

  /**
   * The event's lag, and for a step's end its duration since the step's latest STARTED before
   * it, both by the agent's clock (the preflight bounds its skew). Only the replica that stored
   * the event observes it, so counts add up across replicas.
   */
  private async observeStored(run: InstallRunEntity, input: ReportStepInput): Promise<void> {
    this.observer.eventStored(Math.max(0, (Date.now() - new Date(input.occurredAt).getTime()) / 1000));
    if (input.status !== 'SUCCEEDED' && input.status !== 'FAILED') {
      return;
    }
    const started = await this.runs.startedBefore(run.id, input.step, input.seq);
    if (started) {
      this.observer.stepFinished(input.step, input.status, Math.max(0, (new Date(input.occurredAt).getTime() - started.getTime()) / 1000));
    }
  }

  /** Moves the run and the node along with what the agent said. */
  private async follow(run: InstallRunEntity, input: ReportStepInput): Promise<void> {
    if (run.status !== 'RUNNING') {
      return;
    }
    const node = await this.nodes.get(run.nodeId);
    if (node.status === 'STALLED') {
      await this.nodes.transition(node.id, 'AGENT_HEARD', message('node.agentReportsAgain', { step: describeStep(input.step).title }));
    }
    const title = describeStep(input.step).title;
    if (input.status === 'FAILED') {
      const said = eventMessageOf(input);
      const reason = message('install.stepFailed', { step: bare(title), reason: said ?? input.message ?? bare(message('install.noReason')) });
      await this.installs.finish(run, 'FAILED', input.step, reason, failureCodeOf(input.detail));
      await this.nodes.transition(node.id, 'INSTALL_FAILED', reason);
      this.logger.info({ runId: run.id, step: input.step }, 'install run failed');
    } else if (input.status === 'SUCCEEDED' && input.step === 'START_KUBELET') {
      await this.installs.finish(run, 'SUCCEEDED', null, null);
      await this.nodes.transition(node.id, 'NODE_READY', message('node.nodeReady'), { ready: true });
      this.logger.info({ runId: run.id }, 'install run succeeded');
    } else if (input.status === 'STARTED' || input.status === 'SUCCEEDED') {
      await this.nodes.updateWhile(node.id, 'INSTALLING', reasonFields(message(input.status === 'STARTED' ? 'node.stepRunning' : 'node.stepDone', { step: bare(title) })));
    } else if (input.status === 'PROGRESS' && input.step === 'START_KUBELET') {
      // The node list, its status card and the batch view say so while kubelet waits for an operator's approval.
      const csrs = waitingCsrsOf(input);
      const reason = csrs.length > 0 ? message('node.waitingForCsrs', { count: csrs.length, csrs: csrs.join(', ') }) : message('node.stepRunning', { step: bare(title) });
      if (node.statusReasonCoded?.code !== reason.code || JSON.stringify(node.statusReasonCoded.params) !== JSON.stringify(reason.params)) {
        await this.nodes.updateWhile(node.id, 'INSTALLING', reasonFields(reason));
      }
    }
  }
}

/** The CSRs a START_KUBELET progress event says kubelet waits for (`agent.kubelet.waitingCsrs` names them). */
function waitingCsrsOf(input: Pick<ReportStepInput, 'messageCode' | 'messageParams' | 'detail'>): string[] {
  if (input.messageCode !== 'agent.kubelet.waitingCsrs') {
    return [];
  }
  const named = (input.detail as { pendingCsrNames?: unknown } | null | undefined)?.pendingCsrNames;
  if (Array.isArray(named)) {
    return named.filter((name): name is string => typeof name === 'string');
  }
  const csrs = (input.messageParams as { csrs?: unknown } | null | undefined)?.csrs;
  return typeof csrs === 'string' && csrs !== '' ? csrs.split(', ') : [];
}

/** The coded message of an agent's event, when its code is one the catalogue knows. */
export function eventMessageOf(input: Pick<ReportStepInput, 'messageCode' | 'messageParams'>): Message | null {
  if (!isMessageCode(input.messageCode)) {
    return null;
  }
  return { code: input.messageCode, params: (input.messageParams ?? {}) as MessageParams };
}
