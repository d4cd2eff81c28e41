import { randomUUID } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { type NodeEntity, type NodeStore, type RemovalDecision, type RemovalDecisionKind, type RemovalRunEntity, type RemovalRunStore, isUuid } from '@ccos/api/data-access-db';
import { type KubeClient, type NodeSummary, capacityCheck, classifyPods, isStatus, listPodsOnNode, summarizeNode, uncordonNode } from '@ccos/api/data-access-kube';
import type { SshPool } from '@ccos/api/data-access-ssh';
import { AppError, type ApprovalGate, BadUserInputError, ConflictError, NO_APPROVAL_GATE, NotFoundError, PreconditionError, codedFields, drainPlanSummary, kubectlLine, runEventFields, runFields } from '@ccos/api/util-graphql';
import {
  type RemovalOptions,
  canUncordon,
  checkRemovalOptions,
  checkWrittenReason,
  removalCancellable,
  removalNeedsSecondPerson,
  removalSafety,
  UNCORDON_FROM,
  statusText,
  transition,
} from '@ccos/shared/domain';
import { bare, type CodedText, type Message, type MessageParams, message } from '@ccos/shared/messages';
import { probeHost } from './host-commands';
import type { ClusterAccess, HostAccess } from './removal-ports';
import type { RemovalPreviewType } from './removal-preview.type';
import type { ProgressTick } from './removal-progress';
import type { RemovalEventType, RemovalProgressType, RemovalRunType, UncordonResultType } from './removal-run.type';
import type { RemovalRunner } from './removal-runner';
import type { DrainActionName, DrainPodClassName } from './removal.enums';


/** How long cancelRemoval waits for the drain to stop before answering. */
const CANCEL_WAIT_MS = 15_000;
/** How often a run executing on another process is read while waiting for its end. */
const ENDED_POLL_MS = 500;

/** The console asks for a preview whenever an option changes: an SSH login per answer (10 s for a dead host) is too much. */
const HOST_PROBE_TTL_MS = 30_000;

/** The Node object, or null when it does not exist. */
async function readNode(client: KubeClient, name: string, signal?: AbortSignal): Promise<NodeSummary | null> {
  try {
    return summarizeNode(await client.call(`read node ${name}`, (options) => client.core.readNode({ name }, options), signal));
  } catch (error) {
    if (isStatus(error, 404)) {
      return null;
    }
    throw error;
  }
}

/**
 * UNAVAILABLE, saying what could not be done (`what`, given the foreign error's text as its
 * `error` parameter, which is data); an AppError passes through as it is.
 */
function unavailable(what: (error: string) => CodedText, error: unknown): AppError {
  return error instanceof AppError ? error : new AppError('UNAVAILABLE', what(error instanceof Error ? error.message : String(error)), {}, error);
}

/** Whether a second person approved the call already (four-eyes): it is then not held again. */
export interface Approval {
  readonly approved: boolean;
}
const NOT_APPROVED: Approval = { approved: false };

/**
 * Removing nodes (the seed's 三、如何移除节点): the preview the console shows before an operator
 * confirms, starting a tracked run (executed by the RemovalRunner), cancelling its drain, and
 * making a node schedulable again after a removal that did not finish.
 */
export class RemovalService {
  private readonly probes = new Map<string, { at: number; result: Promise<{ reachable: boolean; message: CodedText }> }>();

  constructor(
    private readonly runs: RemovalRunStore,
    private readonly nodes: NodeStore,
    private readonly clusters: ClusterAccess,
    private readonly hosts: HostAccess,
    private readonly ssh: SshPool,
    private readonly runner: RemovalRunner,
    private readonly approvals: ApprovalGate = NO_APPROVAL_GATE,
  ) {}

  /**
   * What a removal with `options` would do and whether it may start. Reads only, within a few
   * seconds: a cluster that does not answer gives CLUSTER_UNREACHABLE rather than a wait.
   */
  async preview(nodeId: string, options: RemovalOptions): Promise<RemovalPreviewType> {
    this.checkOptions(options);
    const node = await this.nodes.get(nodeId);
    const drainOptions = { force: options.force, deleteEmptyDirData: options.deleteEmptyDirData, ignoreDaemonSets: options.ignoreDaemonSets };
    const clusterSide = this.clusters
      .read(node.clusterId, async ({ client, nodes, podsOnNode }, signal) => {
        const live = await readNode(client, node.hostname, signal);
        if (!live) {
          return null;
        }
        // Pods from the watch cache once it has listed (a list per node before); one plan serves both the pod table and the capacity check.
        const cached = podsOnNode(node.hostname) !== null;
        const podsOn = (name: string): V1Pod[] | Promise<V1Pod[]> => (cached ? (podsOnNode(name) ?? []) : listPodsOnNode(client, name, signal));
        const onNode = await podsOn(node.hostname);
        const plan = await classifyPods(client, node.hostname, onNode, { ...drainOptions, signal });
        const capacity = await capacityCheck(client, node.hostname, { ...drainOptions, signal }, { planned: { onNode, plan }, podsOnNode: podsOn, nodes: nodes() });
        return { live, nodes: nodes(), plan, capacity };
      })
      .catch((error: unknown) => Promise.reject(unavailable((text) => message('removal.readFailed', { node: node.hostname, error: text }), error)));
    const [cluster, host] = await Promise.all([clusterSide, this.hostPreview(node)]);
    // Kubernetes has no certificate revocation: say so before anyone relies on removal for it.
    const certificatesStay = message('removal.preview.certificatesStay', { node: node.hostname });
    const statusProblem = transition(node.status, 'REMOVAL_STARTED');
    if (!cluster) {
      return {
        nodeId,
        nodeName: node.hostname,
        allowed: false,
        ...refusalFields(message('common.list', { items: [bare(message('removal.preview.notInCluster', { node: node.hostname })), ...(statusProblem.ok ? [] : [bare(statusProblem.reason)])] })),
        exists: false,
        roles: [],
        ready: false,
        readyStatus: 'Unknown',
        unschedulable: false,
        safety: [],
        pods: [],
        counts: { evict: 0, skip: 0, refuse: 0 },
        warnings: [certificatesStay.message],
        refusals: [],
        warningLines: [kubectlLine(certificatesStay.message, bare(certificatesStay))],
        refusalLines: [],
        budgets: [],
        capacity: null,
        host,
      };
    }
    const { live, plan, capacity } = cluster;
    const safety = removalSafety(live, cluster.nodes, options);
    const refusal = [statusProblem.ok ? null : statusProblem.reason.message, safety.refusal, plan.refusal].filter((part): part is string => part !== null).join('; ');
    const refusalParts: Message[] = [
      ...(statusProblem.ok ? [] : [bare(statusProblem.reason)]),
      ...(safety.refusalCoded ? [bare(safety.refusalCoded)] : []),
      ...(plan.refusalCoded ? [plan.refusalCoded] : []),
    ];
    const summary = drainPlanSummary(plan);
    return {
      nodeId,
      nodeName: node.hostname,
      allowed: refusal === '',
      ...refusalFields(refusal === '' ? null : message('common.list', { items: refusalParts })),
      exists: true,
      roles: live.roles,
      ready: live.ready,
      readyStatus: live.readyStatus,
      unschedulable: live.unschedulable,
      safety: safety.checks.map((check) => ({ ...check })),
      pods: plan.pods.map((pod) => ({
        pod: pod.pod,
        namespace: pod.namespace,
        name: pod.name,
        podClass: pod.class.toUpperCase().replace(/-/g, '_') as DrainPodClassName,
        action: pod.action.toUpperCase() as DrainActionName,
        reason: pod.reason,
        reasonCode: pod.reasonCoded.code,
        reasonParams: pod.reasonCoded.params,
        controller: pod.controller,
        pdbs: pod.pdbs,
        deletedWith: pod.deletedWith.map((option) => (option === 'force' ? 'FORCE' : 'DELETE_EMPTY_DIR_DATA')),
      })),
      counts: summary.counts,
      warnings: [...plan.warnings, certificatesStay.message],
      refusals: plan.refusals,
      warningLines: [...plan.warnings.map((line, index) => kubectlLine(line, plan.warningsCoded[index])), kubectlLine(certificatesStay.message, bare(certificatesStay))],
      refusalLines: summary.refusalLines,
      budgets: summary.budgets,
      capacity: {
        fits: capacity.fits,
        message: capacity.detail.message,
        messageCode: capacity.detail.coded.code,
        messageParams: capacity.detail.coded.params,
        requiredCpuMillicores: capacity.detail.required.cpuMillicores,
        requiredMemoryBytes: capacity.detail.required.memoryBytes,
        requiredPods: capacity.detail.required.pods,
        availableCpuMillicores: capacity.detail.available.cpuMillicores,
        availableMemoryBytes: capacity.detail.available.memoryBytes,
        availablePods: capacity.detail.available.pods,
        candidates: capacity.detail.candidates.map((candidate) => candidate.name),
        unplaceable: capacity.detail.unplaceable,
        unmanaged: capacity.detail.unmanaged,
      },
      host,
    };
  }

  /**
   * Starts a removal run and returns at once. Refused (FAILED_PRECONDITION, naming the rule) for
   * a control-plane node, the last schedulable Ready worker without allowLastWorker, an
   * ungraceful removal of a Ready node or without the typed name; CONFLICT when one runs already.
   */
  async start(nodeId: string, options: RemovalOptions, actor: string, approval: Approval = NOT_APPROVED): Promise<RemovalRunEntity> {
    this.checkOptions(options);
    const node = await this.nodes.get(nodeId);
    if (node.status === 'REMOVING') {
      const running = await this.runs.runningOf(nodeId);
      throw new ConflictError(
        running ? message('removal.alreadyRunningRun', { node: node.hostname, runId: running.id, phase: running.phase }) : message('removal.alreadyRunning', { node: node.hostname }),
        { runId: running?.id ?? null },
      );
    }
    const allowed = transition(node.status, 'REMOVAL_STARTED');
    if (!allowed.ok) {
      throw new PreconditionError(message('node.refused', { node: node.hostname, reason: bare(allowed.reason) }), { status: node.status });
    }
    const { client, nodes } = await this.clusterOf(node);
    const live = await readNode(client, node.hostname).catch((error: unknown) => Promise.reject(unavailable((text) => message('removal.readNodeFailed', { node: node.hostname, error: text }), error)));
    if (!live) {
      throw new PreconditionError(message('removal.nothingToRemove', { node: node.hostname }), { status: node.status });
    }
    const safety = removalSafety(live, nodes(), options);
    if (!safety.allowed) {
      const rules = safety.checks.filter((check) => check.blocking && !check.passed).map((check) => check.rule);
      throw new PreconditionError(message('removal.refused', { node: node.hostname, refusal: safety.refusalCoded ? bare(safety.refusalCoded) : null }), { rules });
    }
    if (!approval.approved && removalNeedsSecondPerson(options)) {
      await this.approvals.gate({
        clusterId: node.clusterId,
        action: 'REMOVE_NODE',
        target: node.hostname,
        params: { nodeId, options },
        preview: async () => blastRadiusOf(await this.preview(nodeId, options)),
        actor,
      });
    }
    const saved = await this.runs.insertRunning({
      id: randomUUID(),
      nodeId,
      clusterId: node.clusterId,
      nodeName: node.hostname,
      nodeUid: live.uid || null,
      phase: 'DRAIN',
      options,
      requestedBy: actor,
    });
    if (!saved) {
      throw new ConflictError(message('removal.alreadyRunning', { node: node.hostname }));
    }
    try {
      // Queued first: a run whose job could not be queued is taken back with nothing changed. A job
      // that finds no run (the node's transition failed) ends at once.
      await this.runner.queue(saved);
      await this.nodes.transition(nodeId, 'REMOVAL_STARTED', message('node.removalStarted', { actor }));
    } catch (error) {
      await this.runs.delete(saved.id);
      throw error;
    }
    return saved;
  }

  /**
   * Stops the drain of the node's running removal; the run ends CANCELLED and the node stays
   * cordoned (DRAIN_FAILED). Refused once the drain is over (the Node is being deleted).
   */
  async cancel(nodeId: string, actor: string): Promise<RemovalRunEntity> {
    const node = await this.nodes.get(nodeId);
    const run = await this.runs.runningOf(nodeId);
    if (!run) {
      throw new PreconditionError(message('removal.notRunning', { node: node.hostname }), { status: node.status });
    }
    if (!removalCancellable(run.phase)) {
      throw new PreconditionError(message('removal.notCancellable', { node: node.hostname, phase: run.phase }), { phase: run.phase });
    }
    const reason = message('removal.cancelledBy', { actor });
    await this.runs.requestCancel(run.id, { reason: reason.message, reasonCoded: bare(reason) });
    // Executing on another process (its executor reads the flag), or waiting for its job (it reads the flag first).
    this.runner.cancelLocal(run.id, reason);
    return this.ended(run.id, CANCEL_WAIT_MS);
  }

  /** The run once it has ended, wherever it executes; after `waitMs` (default: no limit), as it is then. */
  async ended(runId: string, waitMs = Number.POSITIVE_INFINITY): Promise<RemovalRunEntity> {
    const deadline = Date.now() + waitMs;
    let current = await this.runs.get(runId);
    while (current.status === 'RUNNING' && Date.now() < deadline) {
      await this.runner.settledWithin(runId, Math.min(ENDED_POLL_MS, deadline - Date.now()));
      current = await this.runs.get(runId);
    }
    return current;
  }

  /**
   * Has the node's running removal go on without its host: the phases that need the host
   * (stopping the kubelet, cleaning it) are passed, and the node is marked reinstall required.
   * For a host that is gone and that the run waits for; a written reason is required.
   */
  skipHostSide(nodeId: string, reason: string, actor: string, approval: Approval = NOT_APPROVED): Promise<RemovalRunEntity> {
    return this.decide(nodeId, reason, actor, 'skipHost', approval);
  }

  /**
   * Has the node's running drain go past the PodDisruptionBudgets that hold it: the pods they
   * refuse to evict are deleted instead (kubectl drain --disable-eviction, for those pods only).
   * For an ADMIN (the resolver checks), with a written reason; only while the run drains.
   */
  forceDrain(nodeId: string, reason: string, actor: string, approval: Approval = NOT_APPROVED): Promise<RemovalRunEntity> {
    return this.decide(nodeId, reason, actor, 'forceDrain', approval);
  }

  /**
   * Records an operator's decision about the node's running removal and has its executor apply it,
   * here or through its heartbeat. On a cluster with four-eyes on, a decision not approved yet is
   * held for a second person instead (once it is one the run could take now).
   */
  private async decide(nodeId: string, reason: string, actor: string, kind: RemovalDecisionKind, approval: Approval): Promise<RemovalRunEntity> {
    const problem = checkWrittenReason(reason, message(kind === 'skipHost' ? 'removal.skipHost.reasonRequired' : 'removal.forceDrain.reasonRequired'));
    if (problem) {
      throw new BadUserInputError('reason', problem);
    }
    const node = await this.nodes.get(nodeId);
    const run = await this.runs.runningOf(nodeId);
    if (!run) {
      throw new PreconditionError(message('removal.notRunning', { node: node.hostname }), { status: node.status });
    }
    if (!approval.approved && (kind === 'skipHost' || run.phase === 'DRAIN') && !run[kind]) {
      await this.approvals.gate({
        clusterId: node.clusterId,
        action: kind === 'skipHost' ? 'SKIP_REMOVAL_HOST_SIDE' : 'FORCE_REMOVAL_DRAIN',
        target: node.hostname,
        params: { nodeId, reason: reason.trim() },
        preview: async () => ({ nodeName: node.hostname, runId: run.id, phase: run.phase, blocker: run.blocker, blocking: run.blocking }),
        actor,
      });
    }
    const decision = { actor, reason: reason.trim(), at: new Date().toISOString() };
    if (!(await this.runs.requestDecision(run.id, kind, decision))) {
      const now = await this.runs.get(run.id);
      const earlier = now[kind];
      if (earlier) {
        throw new ConflictError(message(kind === 'skipHost' ? 'removal.skipHost.already' : 'removal.forceDrain.already', { node: node.hostname, actor: earlier.actor }));
      }
      throw now.status === 'RUNNING'
        ? new PreconditionError(message('removal.forceDrain.notDraining', { node: node.hostname, phase: now.phase }), { phase: now.phase })
        : new PreconditionError(message('removal.notRunning', { node: node.hostname }), { status: node.status });
    }
    // Executing on another process (its executor reads the request), or waiting for its job (it reads the request first).
    this.runner.decideLocal(run.id, kind, decision);
    return this.runs.get(run.id);
  }

  /**
   * Makes the node schedulable again: after a removal that failed or was cancelled
   * (DRAIN_FAILED → JOINED), or for a JOINED node left cordoned.
   */
  async uncordon(nodeId: string, actor: string): Promise<UncordonResultType> {
    const node = await this.nodes.get(nodeId);
    if (node.status === 'REMOVING') {
      throw new PreconditionError(message('removal.cancelFirst', { node: node.hostname }), { status: node.status });
    }
    if (!canUncordon(node.status)) {
      throw new PreconditionError(message('removal.uncordonNeeds', { node: node.hostname, status: statusText(node.status), needs: UNCORDON_FROM.map(statusText) }), { status: node.status });
    }
    const { client } = await this.clusterOf(node);
    let status: NodeEntity['status'] = node.status;
    if (node.status === 'DRAIN_FAILED') {
      // The state machine decides first, so a removal started meanwhile is not undermined.
      status = (await this.nodes.transition(nodeId, 'UNCORDONED', message('node.uncordonedBy', { actor }), { unschedulable: false })).status;
    }
    try {
      const result = await uncordonNode(client, node.hostname);
      return { nodeId, hostname: node.hostname, status, changed: result.changed };
    } catch (error) {
      if (isStatus(error, 404)) {
        throw new PreconditionError(message('removal.nodeGone', { node: node.hostname }));
      }
      throw unavailable((text) => message('removal.uncordonFailed', { node: node.hostname, status: statusText(status), error: text }), error);
    }
  }

  runsOf(nodeId: string): Promise<RemovalRunEntity[]> {
    if (!isUuid(nodeId)) {
      throw new NotFoundError('node', nodeId);
    }
    return this.runs.ofNode(nodeId);
  }

  async run(id: string): Promise<RemovalRunEntity> {
    const run = await this.runs.find(id);
    if (!run) {
      throw new NotFoundError('removal run', id);
    }
    return run;
  }

  latestRun(nodeId: string): Promise<RemovalRunEntity | null> {
    return this.runs.latestOf(nodeId);
  }

  async events(runId: string, afterSeq = 0, limit?: number): Promise<RemovalEventType[]> {
    return (await this.runs.events.list(runId, afterSeq, limit)).map((event) => ({ ...runEventFields(event), kind: event.kind, phase: event.phase, pod: event.pod, pdb: event.pdb }));
  }

  async view(run: RemovalRunEntity): Promise<RemovalRunType> {
    const [node, lastSeq] = await Promise.all([this.nodes.find(run.nodeId), this.runs.events.lastSeq(run.id)]);
    const { confirmHostname: _typed, ...options } = run.options;
    return {
      ...runFields(run, lastSeq),
      clusterId: run.clusterId,
      nodeName: run.nodeName,
      status: run.status,
      phase: run.phase,
      options,
      blocking: run.blocking.map((entry) => ({
        pod: entry.pod, pdb: entry.pdb ?? null, message: entry.message, ...codedFields('message', entry.messageCoded),
      })),
      cancelRequested: run.cancelRequested,
      blocker: run.blocker ? message(run.blocker.code, run.blocker.params).message : null,
      ...codedFields('blocker', run.blocker),
      blockerSince: run.blockerSince,
      hostSkip: decisionView(run.skipHost),
      forceDrain: decisionView(run.forceDrain),
      nodeStatus: node?.status ?? 'REMOVED',
      nodeStatusReason: node?.statusReason ?? null,
      ...codedFields('nodeStatusReason', node?.statusReasonCoded),
    };
  }

  /**
   * One removalProgress message: the run as it is now (the node's latest run) and the events the
   * subscriber has not had yet, per its cursor.
   */
  async progressMessage(tick: ProgressTick): Promise<RemovalProgressType> {
    const { nodeId, cursor, payload } = tick;
    let run: RemovalRunEntity | null;
    if (!payload) {
      run = await this.latestRun(nodeId);
    } else if (payload.removalId === cursor.runId) {
      run = await this.runs.find(payload.removalId);
    } else {
      const other = await this.runs.find(payload.removalId);
      // A late announcement of an older run is not news.
      const older = other && cursor.runId !== null && other.startedAt.getTime() < cursor.startedAt;
      run = !other || older ? (cursor.runId ? await this.runs.find(cursor.runId) : null) : other;
    }
    if (run?.id !== cursor.runId) {
      cursor.runId = run?.id ?? null;
      cursor.startedAt = run?.startedAt.getTime() ?? 0;
      cursor.lastSeq = 0;
    }
    const events = run ? await this.events(run.id, cursor.lastSeq) : [];
    cursor.lastSeq = events.at(-1)?.seq ?? cursor.lastSeq;
    return { nodeId, run: run ? await this.view(run) : null, events };
  }

  private checkOptions(options: RemovalOptions): void {
    const problem = checkRemovalOptions(options);
    if (problem) {
      throw new BadUserInputError(`options.${problem.field}`, problem.problem);
    }
  }

  private async clusterOf(node: NodeEntity): Promise<{ client: KubeClient; nodes(): NodeSummary[] }> {
    try {
      return await this.clusters.watch(node.clusterId);
    } catch (error) {
      throw unavailable((text) => message('removal.clusterOfUnreachable', { node: node.hostname, error: text }), error);
    }
  }

  private async hostPreview(node: NodeEntity): Promise<RemovalPreviewType['host']> {
    const target = this.hosts(node);
    if (!target) {
      return {
        credentials: false,
        reachable: null,
        ...textFields(message('removal.preview.noSsh', { node: node.hostname, discovered: node.origin === 'DISCOVERED' })),
      };
    }
    const cached = this.probes.get(node.id);
    const fresh = cached && Date.now() - cached.at < HOST_PROBE_TTL_MS ? cached : { at: Date.now(), result: probeHost(this.ssh, target) };
    this.probes.set(node.id, fresh);
    for (const [id, entry] of this.probes) {
      if (Date.now() - entry.at >= HOST_PROBE_TTL_MS) {
        this.probes.delete(id);
      }
    }
    const probe = await fresh.result;
    return {
      credentials: true,
      reachable: probe.reachable,
      ...textFields(message(probe.reachable ? 'removal.preview.reachable' : 'removal.preview.unreachable', { probe: bare(probe.message) })),
    };
  }
}

function decisionView(decision: RemovalDecision | null): { actor: string; reason: string; at: Date } | null {
  return decision ? { actor: decision.actor, reason: decision.reason, at: new Date(decision.at) } : null;
}

/** A kubectl line with its code and parameters. */

/** A preview's refusal: the English text and its code and parameters. */
function refusalFields(text: CodedText | null): { refusal: string | null; refusalCode: string | null; refusalParams: MessageParams | null } {
  return { refusal: text?.message ?? null, refusalCode: text?.code ?? null, refusalParams: text?.params ?? null };
}

/** A message field with its code and parameters. */
function textFields(text: CodedText): { message: string; messageCode: string; messageParams: MessageParams } {
  return { message: text.message, messageCode: text.code, messageParams: text.params };
}

/** What a held removal would do, for its approver: the pods it evicts or deletes, the budgets in the way, the safety verdicts. */
function blastRadiusOf(preview: RemovalPreviewType): Record<string, unknown> {
  return {
    nodeName: preview.nodeName,
    allowed: preview.allowed,
    refusal: preview.refusal,
    counts: preview.counts,
    pods: preview.pods.map((pod) => ({ ...pod })),
    budgets: preview.budgets.map((budget) => ({ ...budget })),
    safety: preview.safety.map((check) => ({ ...check })),
    warnings: preview.warnings,
  };
}
