import type { Logger } from 'pino';
import type { ClusterProbe } from '@ccos/api/data-access-cluster-connections';
import { type AgentTokens, type HostManifestStore, type InstallRunEntity, type InstallRunStore, type NewStepEvent, type NodeStore, type RunEventCaps, reasonFields } from '@ccos/api/data-access-db';
import { AppError, BadUserInputError } from '@ccos/api/util-graphql';
import { describeStep } from '@ccos/shared/domain';
import { bare, type CodedText, isMessageCode, type Message, type MessageParams, message } from '@ccos/shared/messages';
import { type InstallObserver, UNOBSERVED_INSTALLS, failureCodeOf } from './install-metrics';
import type { InstallProgress } from './install-progress';
import type { InstallService } from './install.service';
import {
  type AgentRunType, DEFAULT_RUN_EVENT_CAPS, type ReportStepInput, type ReportStepResultType, type ReportStepsResultType, STEP_EVENT_RESERVE, STEP_EVENT_RESERVE_BYTES, eventBytes,
} from './report-step.input';

/**
 * The agent's side of an install: it reports step events (stored once per run and seq)
 * and asks what it needs to know. A run ends with its first FAILED event or with
 * START_KUBELET SUCCEEDED (the Node is Ready), and the node's status follows (an install run's;
 * an apply run leaves its JOINED node as it is).
 */
export class AgentReportService {
  constructor(
    private readonly runs: InstallRunStore,
    private readonly tokens: AgentTokens,
    private readonly nodes: NodeStore,
    private readonly installs: InstallService,
    private readonly probe: ClusterProbe,
    private readonly progress: InstallProgress,
    private readonly logger: Logger,
    private readonly manifests: Pick<HostManifestStore, 'recordRun'>,
    private readonly observer: InstallObserver = UNOBSERVED_INSTALLS,
    private readonly caps: RunEventCaps = { ...DEFAULT_RUN_EVENT_CAPS, reserveEvents: STEP_EVENT_RESERVE, reserveBytes: STEP_EVENT_RESERVE_BYTES },
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
    return this.reportAs(await this.authenticate(token, input.runId), input);
  }

  /**
   * Several events of one run at once (what the agent's spool holds), in seq order with repeats
   * dropped, up to and including an event that ends the run: authenticated, capped and stored with
   * the run's counters in one statement, which reads nothing first. The run is read only when an
   * event moves it or its node along. What that does not take (a token to refuse, a cap in reach,
   * a run that ended, events after its end) goes event by event as `reportStep` would: a refusal
   * fails the whole request, and the agent then sends its events one by one (whatever was stored
   * is a duplicate then).
   */
  async reportBatch(token: string | null, inputs: readonly ReportStepInput[]): Promise<ReportStepsResultType> {
    if (inputs.length === 0 || inputs.length > MAX_REPORT_BATCH) {
      throw new BadUserInputError('inputs', message('agentToken.batchSize', { max: MAX_REPORT_BATCH }));
    }
    const runIds = new Set(inputs.map((input) => input.runId));
    if (runIds.size > 1) {
      throw new BadUserInputError('inputs', message('agentToken.batchOneRun', { runs: runIds.size }));
    }
    const runId = inputs[0].runId;
    const events = inSeqOrder(inputs);
    const together = throughTheEnd(events);
    const weighed = together.map((input) => ({ ...storedEventOf(input), seq: input.seq, bytes: eventBytes(input) }));
    const credential = this.tokens.presented(token);
    // The caps without the reserve kept for STARTED, SUCCEEDED and FAILED: a batch within them passes overCap event by event.
    const room = { events: this.caps.events, bytes: this.caps.bytes };
    const admitted = credential ? await this.runs.admitEventBatch(runId, credential, weighed, room, new Date()) : null;
    if (!admitted) {
      return { accepted: events.length, ...(await this.oneByOne(await this.authenticate(token, runId), events)) };
    }
    const stored = new Set(admitted.stored);
    const fresh = together.filter((input) => stored.has(input.seq));
    const duplicates = together.filter((input) => !stored.has(input.seq)).map((input) => input.seq);
    // Every event's progress first, in one notification, then what they change, in order.
    for (const input of fresh) {
      this.announce({ id: runId, nodeId: admitted.nodeId }, input);
    }
    // Only events that move the run or the node read them; a batch of progress alone does when
    // the node had stalled (it hears its agent again), at its last event.
    const moving = fresh.filter(movesNode);
    const followed = new Set(moving.length > 0 ? moving : admitted.nodeStatus === 'STALLED' ? fresh.slice(-1) : []);
    const run = followed.size > 0 ? await this.runs.find(runId) : null;
    for (const input of fresh) {
      await this.moveOn(runId, input, followed.has(input) ? run : null);
    }
    const rest = events.slice(together.length);
    if (rest.length > 0) {
      // After the end: refused, or duplicates of events stored before (the run is read again).
      const after = await this.oneByOne(await this.authenticate(token, runId), rest);
      return { accepted: events.length, duplicateSeqs: [...duplicates, ...after.duplicateSeqs], cancelRequested: after.cancelRequested };
    }
    return { accepted: events.length, duplicateSeqs: duplicates, cancelRequested: admitted.cancelRequested };
  }

  /** Events taken one at a time, as `reportStep` takes them. */
  private async oneByOne(run: InstallRunEntity, events: readonly ReportStepInput[]): Promise<Omit<ReportStepsResultType, 'accepted'>> {
    const duplicateSeqs: number[] = [];
    let cancelRequested = run.cancelRequested;
    for (const input of events) {
      const result = await this.reportAs(run, input);
      if (result.duplicate) {
        duplicateSeqs.push(input.seq);
      }
      cancelRequested = result.cancelRequested;
    }
    return { duplicateSeqs, cancelRequested };
  }

  private async reportAs(run: InstallRunEntity, input: ReportStepInput): Promise<ReportStepResultType> {
    if (run.status !== 'RUNNING') {
      return this.afterTheEnd(run, input);
    }
    const bytes = eventBytes(input);
    // Past a cap by the row just read: refused without a transaction (a flood past the cap stays cheap).
    const over = overCap(run, input.status, bytes, this.caps);
    if (over) {
      return this.duplicateOrRefused(run, input, bytes, over, false);
    }
    const admission = await this.runs.admitEvent(run.id, { seq: input.seq, ...storedEventOf(input) }, bytes, this.caps);
    if (admission.outcome === 'RUN_FINISHED') {
      // It ended between the token check and the insert.
      return this.afterTheEnd({ ...run, status: admission.status as InstallRunEntity['status'] }, input);
    }
    if (admission.outcome === 'EVENT_COUNT' || admission.outcome === 'EVENT_BYTES') {
      // The store recorded that the run was capped with the refusal it decided.
      return this.duplicateOrRefused(run, input, bytes, admission, true);
    }
    const duplicate = admission.outcome === 'DUPLICATE';
    if (!duplicate) {
      await this.runs.heardFrom(run.id, new Date());
      this.announce(run, input);
      await this.moveOn(run.id, input, run);
    }
    // The run as this request authenticated it (RUNNING): only an operator's cancel changes the
    // flag, and reading it again a few milliseconds later cost one more query for every event.
    return { accepted: true, duplicate, cancelRequested: run.cancelRequested };
  }

  /** Tells the subscribers of the node's install progress of a stored event. */
  private announce(run: Pick<InstallRunEntity, 'id' | 'nodeId'>, input: ReportStepInput): void {
    this.progress.eventStored(run, input);
  }

  /** What a stored event changes: the metrics, then (given the run to `follow`) the run and the node. */
  private async moveOn(runId: string, input: ReportStepInput, follow: InstallRunEntity | null): Promise<void> {
    // A metric that cannot be read must not keep the event from moving the run along.
    await this.observeStored(runId, input).catch((error: unknown) => this.logger.warn({ err: error, runId, seq: input.seq }, 'could not time the step event for the metrics'));
    if (!follow) {
      return;
    }
    await this.follow(follow, input).catch((error: unknown) => {
      // The event is stored; a node that moved on meanwhile (e.g. cancelled) keeps its status.
      this.logger.warn({ err: error, runId, seq: input.seq }, 'step event did not change the node');
    });
  }

  /**
   * An event past one of the run's caps: a re-send of one stored before is answered as a duplicate
   * (its answer was lost: the agent's spool then drains); anything else is refused (LIMIT_EXCEEDED),
   * counted, and the run records when it was first capped (`marked`: the store did already).
   */
  private async duplicateOrRefused(run: InstallRunEntity, input: ReportStepInput, bytes: number, over: CapReached, marked: boolean): Promise<ReportStepResultType> {
    if (await this.runs.events.has(run.id, input.seq)) {
      return { accepted: true, duplicate: true, cancelRequested: run.cancelRequested };
    }
    this.observer.eventRefused(over.outcome);
    if (!marked && !run.eventsCappedAt) {
      // Decided on the row just read, outside the store's transaction.
      void this.runs.markEventsCapped(run.id).catch((error: unknown) => this.logger.warn({ err: error, runId: run.id }, 'could not record that the run was capped'));
    }
    const progress = String(input.status === 'PROGRESS');
    throw new AppError(
      'LIMIT_EXCEEDED',
      over.outcome === 'EVENT_COUNT'
        ? message('agentToken.eventLimit', { runId: run.id, stored: String(over.count), progress, status: input.status, step: input.step })
        : message('agentToken.eventBytesLimit', { runId: run.id, stored: String(over.bytes), limit: String(over.limit), eventBytes: String(bytes), progress, status: input.status, step: input.step }),
      { limit: over.limit, cap: over.outcome },
    );
  }

  /**
   * An event for a run that has ended: a re-send of one stored before is answered as a duplicate
   * (its first answer may have been lost: the agent's spool then drains), anything new is refused
   * with RUN_FINISHED, which the agent takes as final. The token's grace after the run is for
   * those re-sends, `agentRun` (whether it was cancelled) and a failed run's diagnostics, not for
   * more events.
   */
  private async afterTheEnd(run: InstallRunEntity, input: ReportStepInput): Promise<ReportStepResultType> {
    if (await this.runs.events.has(run.id, input.seq)) {
      return { accepted: true, duplicate: true, cancelRequested: run.cancelRequested || run.status === 'CANCELLED' };
    }
    this.observer.eventRefused('RUN_FINISHED');
    throw new AppError('RUN_FINISHED', message('agentToken.runFinished', { runId: run.id, runStatus: run.status, status: input.status, step: input.step }), { runStatus: run.status });
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
   * The event's lag, and for a step's end its duration since the step's latest STARTED before
   * it, both by the agent's clock (the preflight bounds its skew). Only the replica that stored
   * the event observes it, so counts add up across replicas.
   */
  private async observeStored(runId: string, input: ReportStepInput): Promise<void> {
    this.observer.eventStored(Math.max(0, (Date.now() - new Date(input.occurredAt).getTime()) / 1000));
    if (input.status !== 'SUCCEEDED' && input.status !== 'FAILED') {
      return;
    }
    const started = await this.runs.startedBefore(runId, input.step, input.seq);
    if (started) {
      this.observer.stepFinished(input.step, input.status, Math.max(0, (new Date(input.occurredAt).getTime() - started.getTime()) / 1000));
    }
  }

  /** What the run left on its host, as the node's record; the node joined whether or not it can be recorded. */
  private async recordManifest(run: InstallRunEntity): Promise<void> {
    try {
      const manifest = await this.manifests.recordRun(run, new Date());
      this.logger.info({ runId: run.id, nodeId: run.nodeId, files: manifest?.files.length ?? 0 }, manifest ? 'recorded what the host runs' : 'the agent said nothing of the files it wrote: no record of what the host runs');
    } catch (error) {
      this.logger.warn({ err: error, runId: run.id, nodeId: run.nodeId }, 'could not record what the host runs; drift inspections of it wait for its next install');
    }
  }

  /**
   * Ends the run at its first FAILED event or at START_KUBELET SUCCEEDED (a succeeded run's host is
   * recorded); how it ended, or null when the event does not end it.
   */
  private async endIfLast(run: InstallRunEntity, input: ReportStepInput): Promise<{ readonly status: 'FAILED'; readonly reason: CodedText } | { readonly status: 'SUCCEEDED' } | null> {
    if (input.status === 'FAILED') {
      const said = eventMessageOf(input);
      const reason = message('install.stepFailed', { step: bare(describeStep(input.step).title), reason: said ?? input.message ?? bare(message('install.noReason')) });
      await this.installs.finish(run, 'FAILED', input.step, reason, failureCodeOf(input.detail));
      this.logger.info({ runId: run.id, step: input.step, purpose: run.purpose }, 'install run failed');
      return { status: 'FAILED', reason };
    }
    if (input.status === 'SUCCEEDED' && input.step === 'START_KUBELET') {
      await this.installs.finish(run, 'SUCCEEDED', null, null);
      this.logger.info({ runId: run.id, purpose: run.purpose }, 'install run succeeded');
      await this.recordManifest(run);
      return { status: 'SUCCEEDED' };
    }
    return null;
  }

  /** Moves the run and the node along with what the agent said. */
  private async follow(run: InstallRunEntity, input: ReportStepInput): Promise<void> {
    if (run.status !== 'RUNNING') {
      return;
    }
    if (run.purpose === 'APPLY') {
      // An apply run's node stays JOINED whatever it says: only its end matters (its rollout reads it).
      await this.endIfLast(run, input);
      return;
    }
    const node = await this.nodes.get(run.nodeId);
    if (node.status === 'STALLED') {
      await this.nodes.transition(node.id, 'AGENT_HEARD', message('node.agentReportsAgain', { step: describeStep(input.step).title }));
    }
    const title = describeStep(input.step).title;
    const ended = await this.endIfLast(run, input);
    if (ended?.status === 'FAILED') {
      await this.nodes.transition(node.id, 'INSTALL_FAILED', ended.reason);
    } else if (ended?.status === 'SUCCEEDED') {
      await this.nodes.transition(node.id, 'NODE_READY', message('node.nodeReady'), { ready: true });
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

/** A cap an event would pass. */
type CapReached = { readonly outcome: 'EVENT_COUNT' | 'EVENT_BYTES'; readonly count: number; readonly bytes: number; readonly limit: number };

/** The cap the event would pass by the run's counts as read, or null (the store's admission decides for good). */
function overCap(run: Pick<InstallRunEntity, 'eventCount' | 'eventBytes'>, status: ReportStepInput['status'], bytes: number, caps: RunEventCaps): CapReached | null {
  const reserved = status !== 'PROGRESS';
  const maxEvents = caps.events + (reserved ? caps.reserveEvents : 0);
  const maxBytes = caps.bytes + (reserved ? caps.reserveBytes : 0);
  if (run.eventCount >= maxEvents) {
    return { outcome: 'EVENT_COUNT', count: run.eventCount, bytes: run.eventBytes, limit: maxEvents };
  }
  if (run.eventBytes + bytes > maxBytes) {
    return { outcome: 'EVENT_BYTES', count: run.eventCount, bytes: run.eventBytes, limit: maxBytes };
  }
  return null;
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

/** Most events one `reportSteps` takes; the agent sends fewer, and fewer bytes than a request may carry. */
export const MAX_REPORT_BATCH = 100;

/** The events of a batch in seq order, each seq once (the first given). */
function inSeqOrder(inputs: readonly ReportStepInput[]): ReportStepInput[] {
  const bySeq = new Map<number, ReportStepInput>();
  for (const input of inputs) {
    if (!bySeq.has(input.seq)) {
      bySeq.set(input.seq, input);
    }
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** Whether an event moves the run or the node along (any but a PROGRESS before START_KUBELET's). */
function movesNode(input: Pick<ReportStepInput, 'step' | 'status'>): boolean {
  return input.status !== 'PROGRESS' || input.step === 'START_KUBELET';
}

/** Whether an event ends its run (the service then refuses any later one). */
function endsRun(input: Pick<ReportStepInput, 'step' | 'status'>): boolean {
  return input.status === 'FAILED' || (input.status === 'SUCCEEDED' && input.step === 'START_KUBELET');
}

/** The events up to and including the first that ends the run: the most one statement may store. */
function throughTheEnd(events: readonly ReportStepInput[]): ReportStepInput[] {
  const end = events.findIndex(endsRun);
  return end < 0 ? [...events] : events.slice(0, end + 1);
}

/** An agent's event as the store keeps it. */
function storedEventOf(input: ReportStepInput): NewStepEvent {
  return {
    step: input.step,
    status: input.status,
    progress: input.progress ?? null,
    message: input.message ?? null,
    messageCoded: eventMessageOf(input),
    detail: input.detail ?? null,
    occurredAt: input.occurredAt,
  };
}
