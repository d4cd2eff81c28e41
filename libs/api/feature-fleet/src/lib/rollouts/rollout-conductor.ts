import type { Logger } from 'pino';
import type { ClusterWatch } from '@ccos/api/data-access-cluster-connections';
import {
  type InstallRunEntity,
  type JobRegistry,
  type MaintenanceWindow,
  type NodeEntity,
  type NodeStore,
  PeriodicQueueing,
  type RolloutEntity,
  type RolloutNodeEntity,
  type RolloutNodeProgress,
  type RolloutStore,
  hostQueue,
} from '@ccos/api/data-access-db';
import { sshFailureOutcome, sshTargetOf } from '@ccos/api/data-access-hosts';
import { type DrainEvent, type DrainPlan, type DrainResult, type NodeSummary, classifyPods, drainNode, listPodsOnNode, uncordonNode } from '@ccos/api/data-access-kube';
import type { SshPool } from '@ccos/api/data-access-ssh';
import { type ApprovalGate, type AuditSink, BadUserInputError, ConflictError, type EventBus, PreconditionError, type RolloutChangedPayload, TOPICS } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import {
  type ApplyKind, type InstallStep, type RolloutKind, type RolloutNodePhase, type RolloutStatus, ROLLOUT_ACTIVE_PHASES, allowedUnavailable, applySteps, isApplyKind, phaseAfterDrain, planRollout,
} from '@ccos/shared/domain';
import { type CodedText, bare, message } from '@ccos/shared/messages';
import type { Clock } from '@ccos/shared/util-timing';
import type { HostManifestView } from '../host-inspector';
import type { FiringAlerts } from './alertmanager';
import { maintenanceWindowProblem, windowState } from './maintenance-window';

/** The durable job that starts a rollout's next nodes (payload: its id); one at a time per cluster. */
export const CONDUCT_TASK = 'cluster.rollout';
/** The durable job that takes one node of a rollout through its phases, on the host's queue. */
export const ROLLOUT_NODE_TASK = 'node.rollout';
export const ROLLOUT_ACTOR = 'rollout';

const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';
const SSH_TIMEOUT_MS = 20_000;
/** Statuses of nodes a rollout takes: joined, installed here (the service holds their SSH access). */
const ELIGIBLE_STATUSES: ReadonlySet<NodeEntity['status']> = new Set(['JOINED']);

/** What the rollout needs of each cluster: its watch (client, Nodes, pods by node). */
export interface RolloutClusterAccess {
  watch(clusterId: string): Promise<Pick<ClusterWatch, 'client' | 'nodes' | 'podsOnNode'>>;
}

/** What a rollout would do, before it starts: its nodes in order with what each drain would do, the budget, the window and the alerts now. */
export interface RolloutPreview {
  readonly nodes: ReadonlyArray<{
    readonly nodeId: string;
    readonly nodeName: string;
    readonly ready: boolean;
    readonly unschedulable: boolean;
    /** What its drain would do now (`kubectl drain --ignore-daemonsets --delete-emptydir-data`). */
    readonly drain: DrainPlan;
  }>;
  /** The budget as a count of nodes. */
  readonly allowed: number;
  /** The window now: null without one. */
  readonly window: { readonly open: boolean; readonly changesAt: Date } | null;
  /** Of `pauseOnAlerts`, those firing now, or why Alertmanager could not tell. */
  readonly firingAlerts: readonly string[];
  readonly alertProblem: CodedText | null;
}

/**
 * What a rollout asks of the host records: what a node's host runs and its state (which nodes an
 * UPGRADE or a REAPPLY takes, and which steps its apply run re-runs), and, at each node's end, an
 * inspection (the recorded files hashed again: the host is as recorded, or drifted).
 */
export interface HostInspections {
  queue(node: Pick<NodeEntity, 'id' | 'clusterId' | 'hostname' | 'ip'>): Promise<void>;
  /** One read for all the nodes, in their order; null for a node no install recorded. */
  standingsOf(nodes: ReadonlyArray<{ readonly nodeId: string; readonly clusterId: string }>): Promise<Array<Pick<HostManifestView, 'state' | 'onClusterSet'> | null>>;
  view(nodeId: string): Promise<Pick<HostManifestView, 'files' | 'drift'> | null>;
}

/** The agent's apply runs (the install service): started on a joined node (its agent by the caller, which holds the host's queue), read until they end. */
export interface ApplyRuns {
  apply(nodeId: string, steps: readonly InstallStep[], actor: string, lost?: AbortSignal): Promise<Pick<InstallRunEntity, 'id'>>;
  run(id: string): Promise<Pick<InstallRunEntity, 'id' | 'status' | 'reason' | 'reasonCoded'>>;
}

/** Counts for the metrics. */
export interface RolloutObserver {
  node(clusterId: string, kind: RolloutKind, outcome: 'started' | 'done' | 'skipped'): void;
  rollout(clusterId: string, kind: RolloutKind, status: RolloutStatus | 'PAUSED_BY_SERVICE'): void;
}

export interface RolloutConductorOptions {
  readonly rollouts: RolloutStore;
  readonly nodes: NodeStore;
  readonly jobs: JobRegistry;
  readonly clusters: RolloutClusterAccess;
  readonly ssh: SshPool;
  readonly secrets: SecretBox;
  readonly audit: AuditSink;
  /** Where every change of a rollout is announced (`rolloutChanged` subscribers). */
  readonly events?: Pick<EventBus, 'publish'>;
  readonly clock: Clock;
  /** How often every running rollout is looked at again (its window may have opened, a node come back). */
  readonly intervalMs: number;
  /** How often a rebooting host and its Node are asked whether they are back. Default 2 s. */
  readonly pollMs?: number;
  readonly drain?: typeof drainNode;
  /** Alertmanager, for rollouts that pause while named alerts fire; none configured: such rollouts are refused. */
  readonly alerts?: FiringAlerts;
  /** A node done is inspected again (its recorded files hashed on the host); UPGRADE and REAPPLY read the records. */
  readonly inspections?: HostInspections;
  /** The agent's apply runs, for UPGRADE and REAPPLY; none: such rollouts are refused. */
  readonly applyRuns?: ApplyRuns;
  readonly logger: Logger;
  readonly observer?: RolloutObserver;
  /** Four-eyes: holds a rollout on a cluster that requires a second person until one approves it. */
  readonly approvals?: ApprovalGate;
}

export interface StartRollout {
  readonly clusterId: string;
  readonly kind: RolloutKind;
  /** These nodes, in this order; null: every eligible node of the cluster (with `labels`, those that carry them all). */
  readonly nodeIds: readonly string[] | null;
  readonly labels: ReadonlyArray<{ readonly key: string; readonly value: string }>;
  readonly maxUnavailable: number;
  readonly maxUnavailableIsPercent: boolean;
  readonly maintenanceWindow: MaintenanceWindow | null;
  /** While Alertmanager says one of these fires, no new node starts: the rollout pauses, naming it. */
  readonly pauseOnAlerts: readonly string[];
  readonly drainTimeoutSeconds: number;
  readonly readyTimeoutSeconds: number;
}

/**
 * What a host's Node still lacks to count as back (after a reboot, or an apply run's kubelet
 * restart): a status posted by the kubelet of the host's boot now, and Ready. Until a rebooted
 * host's kubelet reports, the Node still shows the last boot's Ready (Kubernetes marks it Unknown
 * only after the node-monitor grace period), and a kubelet starts NotReady until its network is
 * up: uncordoning then would leave one node more out of service.
 */
export function nodeBackFrom(bootId: string, node: Pick<NodeSummary, 'ready' | 'bootId'> | undefined): CodedText | null {
  if (node?.bootId !== bootId) {
    return message('rollout.missing.nodeStatus');
  }
  return node.ready ? null : message('rollout.missing.ready');
}

/** How a phase ended: go on to the next, stop here because the rollout is no longer running, or pause the rollout on this node. */
type PhaseOutcome =
  | { readonly kind: 'next'; readonly phase: RolloutNodePhase; readonly progress?: RolloutNodeProgress }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'pause'; readonly problem: CodedText; readonly reason: CodedText };

/**
 * Rolling operations (today: REBOOT). A conductor job per rollout, on the cluster's queue, starts
 * pending nodes as the budget and the maintenance window allow; each started node is a job on its
 * host's queue that cordons and drains it, reboots it over SSH, waits for the new boot, the kubelet
 * and the Node's Ready, and uncordons it. Every step is recorded before the next, so a job picked up
 * again after a restart (or by another worker) goes on where the node was: a host is rebooted once
 * (its boot id says whether it already was). A PodDisruptionBudget that refuses, a deadline or a host
 * that does not answer pauses the rollout with the reason, for an operator to resume or cancel.
 */
export class RolloutConductor {
  private readonly periodic: PeriodicQueueing;
  private readonly log: Logger;
  private readonly drain: typeof drainNode;
  private readonly pollMs: number;

  constructor(private readonly options: RolloutConductorOptions) {
    this.log = options.logger.child({ component: 'rollouts' });
    this.drain = options.drain ?? drainNode;
    this.pollMs = options.pollMs ?? 2000;
    options.jobs.register(CONDUCT_TASK, async (payload) => this.conduct(String(payload['rolloutId'])));
    options.jobs.register(ROLLOUT_NODE_TASK, async (payload, { lost }) => this.runNode(String(payload['rolloutId']), String(payload['nodeId']), lost), { long: true });
    this.periodic = new PeriodicQueueing(options.intervalMs, () => this.queueAll(), (error) => this.log.warn({ err: error }, 'could not queue the running rollouts'));
  }

  start(): void {
    this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** Queues a look at every running rollout. */
  async queueAll(): Promise<void> {
    for (const rollout of await this.options.rollouts.inStatus(['RUNNING'])) {
      await this.queueConduct(rollout);
    }
  }

  async startRollout(input: StartRollout, actor: string, approval: { readonly approved: boolean } = { approved: false }): Promise<RolloutEntity> {
    const nodes = await this.checked(input);
    if (!approval.approved && this.options.approvals) {
      await this.options.approvals.gate({
        clusterId: input.clusterId,
        action: 'START_ROLLOUT',
        target: `${input.kind} ${nodes.map((node) => node.hostname).join(', ')}`.slice(0, 500),
        params: { input: { ...input } },
        preview: async () => blastRadiusOf(await this.preview(input)),
        actor,
      });
    }
    const rollout = await this.options.rollouts.create(
      {
        clusterId: input.clusterId,
        kind: input.kind,
        maxUnavailable: input.maxUnavailable,
        maxUnavailableIsPercent: input.maxUnavailableIsPercent,
        maintenanceWindow: input.maintenanceWindow,
        pauseOnAlerts: [...new Set(input.pauseOnAlerts)],
        drainTimeoutSeconds: input.drainTimeoutSeconds,
        readyTimeoutSeconds: input.readyTimeoutSeconds,
        createdBy: actor,
      },
      nodes.map((node) => ({ nodeId: node.id, nodeName: node.hostname })),
      new Date(this.options.clock.now()),
    );
    if (!rollout) {
      const active = (await this.options.rollouts.ofCluster(input.clusterId)).find((existing) => existing.status === 'RUNNING' || existing.status === 'PAUSED');
      throw new ConflictError(message('rollout.activeExists', { id: active?.id ?? '' }), { rolloutId: active?.id });
    }
    await this.auditRollout(rollout, 'started', message('rollout.started', { kind: rollout.kind, count: nodes.length, actor }), actor);
    this.options.observer?.rollout(rollout.clusterId, rollout.kind, 'RUNNING');
    this.changed(rollout);
    await this.queueConduct(rollout);
    return rollout;
  }

  /** What `startRollout` with this input would do now, changing nothing: refused the same way when it would be. */
  async preview(input: StartRollout): Promise<RolloutPreview> {
    const nodes = await this.checked(input);
    const watch = await this.options.clusters.watch(input.clusterId);
    const summaries = new Map(watch.nodes().map((summary) => [summary.name, summary]));
    const drainOptions = { ignoreDaemonSets: true, deleteEmptyDirData: true };
    const previews = await Promise.all(nodes.map(async (node) => {
      const pods = watch.podsOnNode(node.hostname) ?? (await listPodsOnNode(watch.client, node.hostname));
      const summary = summaries.get(node.hostname);
      return {
        nodeId: node.id,
        nodeName: node.hostname,
        ready: summary?.ready ?? false,
        unschedulable: summary?.unschedulable ?? false,
        drain: await classifyPods(watch.client, node.hostname, pods, drainOptions),
      };
    }));
    const now = new Date(this.options.clock.now());
    const window = input.maintenanceWindow ? windowState(input.maintenanceWindow, now) : null;
    const alerts = input.pauseOnAlerts.length > 0 && this.options.alerts ? await this.options.alerts.firing(input.pauseOnAlerts) : { firing: [] };
    return {
      nodes: previews,
      allowed: allowedUnavailable({ maxUnavailable: input.maxUnavailable, isPercent: input.maxUnavailableIsPercent }, nodes.length),
      window: window === null ? null : window.open ? { open: true, changesAt: window.closesAt } : { open: false, changesAt: window.opensAt },
      firingAlerts: 'firing' in alerts ? alerts.firing : [],
      alertProblem: 'problem' in alerts ? alerts.problem : null,
    };
  }

  /** The input checked as `startRollout` checks it; the nodes it selects, in order. */
  private async checked(input: StartRollout): Promise<NodeEntity[]> {
    if (input.maintenanceWindow) {
      const problem = maintenanceWindowProblem(input.maintenanceWindow);
      if (problem) {
        throw new BadUserInputError(`input.window.${problem.field}`, problem.problem);
      }
    }
    if (input.pauseOnAlerts.length > 0 && !this.options.alerts) {
      throw new BadUserInputError('input.pauseOnAlerts', message('rollout.noAlertmanager'));
    }
    if (input.maxUnavailableIsPercent && input.maxUnavailable > 100) {
      throw new BadUserInputError('input.maxUnavailable', message('validation.between', { min: 1, max: 100 }));
    }
    if (isApplyKind(input.kind) && (!this.options.applyRuns || !this.options.inspections)) {
      throw new BadUserInputError('input.kind', message('rollout.noApplyRuns'));
    }
    const nodes = await this.selectNodes(input);
    return isApplyKind(input.kind) ? this.needing(input.kind, nodes, input.nodeIds !== null && input.nodeIds.length > 0) : nodes;
  }

  /**
   * Of the selected nodes, those an UPGRADE or a REAPPLY has work on: UPGRADE, a node on an older
   * artifact set or with drifted files; REAPPLY, a node with drifted files on the cluster's set (an
   * older one's files come back with its UPGRADE). Nodes named one by one are all taken, but each
   * must have a record of what its host runs, and a REAPPLY refuses an outdated one.
   */
  private async needing(kind: ApplyKind, nodes: NodeEntity[], named: boolean): Promise<NodeEntity[]> {
    const standings = (await this.options.inspections?.standingsOf(nodes.map((node) => ({ nodeId: node.id, clusterId: node.clusterId })))) ?? [];
    if (named) {
      nodes.forEach((node, index) => {
        const standing = standings[index];
        if (!standing) {
          throw new BadUserInputError(`input.nodeIds.${index}`, message('rollout.nodeNotRecorded', { hostname: node.hostname }));
        }
        if (kind === 'REAPPLY' && !standing.onClusterSet) {
          throw new BadUserInputError(`input.nodeIds.${index}`, message('rollout.reapplyOutdated', { hostname: node.hostname }));
        }
      });
      return nodes;
    }
    // DRIFTED wins over OUTDATED in a state: a drifted node's set is read from onClusterSet.
    const needed = nodes.filter((_node, index) => {
      const standing = standings[index];
      return kind === 'UPGRADE' ? standing?.state === 'OUTDATED' || standing?.state === 'DRIFTED' : standing?.state === 'DRIFTED' && standing.onClusterSet;
    });
    if (needed.length === 0) {
      throw new PreconditionError(message(kind === 'UPGRADE' ? 'rollout.noneOutdated' : 'rollout.noneDrifted'));
    }
    return needed;
  }

  async pause(id: string, actor: string): Promise<RolloutEntity> {
    const paused = await this.move(id, ['RUNNING'], 'PAUSED', message('rollout.pausedBy', { actor }));
    await this.auditRollout(paused, 'paused', message('rollout.pausedBy', { actor }), actor);
    return paused;
  }

  /** Goes on where it was: the nodes' problems are forgotten, and the nodes in progress go on (or try again). */
  async resume(id: string, actor: string): Promise<RolloutEntity> {
    const resumed = await this.move(id, ['PAUSED'], 'RUNNING', null);
    await this.options.rollouts.clearProblems(id);
    await this.auditRollout(resumed, 'resumed', message('rollout.resumedBy', { actor }), actor);
    await this.queueActiveNodes(resumed);
    await this.queueConduct(resumed);
    return resumed;
  }

  /** Nothing new starts; a node still draining is uncordoned and skipped, one past its drain is brought back. */
  async cancel(id: string, actor: string): Promise<RolloutEntity> {
    const cancelled = await this.move(id, ['RUNNING', 'PAUSED'], 'CANCELLED', message('rollout.cancelledBy', { actor }));
    await this.auditRollout(cancelled, 'cancelled', message('rollout.cancelledBy', { actor }), actor);
    await this.queueActiveNodes(cancelled);
    return cancelled;
  }

  /** Starts the rollout's next nodes as the budget and the window allow, or ends it when every node is done. */
  async conduct(rolloutId: string): Promise<void> {
    const rollout = await this.options.rollouts.find(rolloutId);
    if (rollout?.status !== 'RUNNING') {
      return;
    }
    if (await this.conductRunning(rollout)) {
      this.changed(rollout);
    }
  }

  /** One pass of {@link conduct}; whether it changed the rollout (its subscribers then read it again). */
  private async conductRunning(rollout: RolloutEntity): Promise<boolean> {
    const now = new Date(this.options.clock.now());
    const waiting = (text: CodedText | null) => this.options.rollouts.recordWaiting(rollout.id, text, now);
    let watch;
    try {
      watch = await this.options.clusters.watch(rollout.clusterId);
    } catch (error) {
      return waiting(message('rollout.problem.cluster', { error: errorText(error) }));
    }
    const summaries = new Map(watch.nodes().map((summary) => [summary.name, summary]));
    const { nodes, skipped, remediating } = await this.nodesNow(rollout, await this.options.rollouts.nodesOf(rollout.id), now);
    const members = nodes.map((node) => {
      const summary = summaries.get(node.nodeName);
      return { nodeId: node.nodeId, phase: node.phase, ready: summary?.ready ?? false, unschedulable: summary?.unschedulable ?? false, remediating: remediating.has(node.nodeId) };
    });
    const plan = planRollout({ maxUnavailable: rollout.maxUnavailable, isPercent: rollout.maxUnavailableIsPercent }, members);
    if (plan.finished) {
      const ended = await this.options.rollouts.moveStatus(rollout.id, ['RUNNING'], 'SUCCEEDED', message('rollout.succeeded', { count: nodes.length }), now);
      if (ended) {
        await this.auditRollout(ended, 'succeeded', message('rollout.succeeded', { count: nodes.length }), ROLLOUT_ACTOR);
        this.options.observer?.rollout(ended.clusterId, ended.kind, 'SUCCEEDED');
      }
      return skipped || ended !== null;
    }
    const pending = nodes.filter((node) => node.phase === 'PENDING');
    if (pending.length === 0) {
      return (await waiting(null)) || skipped;
    }
    if (rollout.maintenanceWindow) {
      const window = windowState(rollout.maintenanceWindow, now);
      if (!window.open) {
        await this.queueConduct(rollout, window.opensAt);
        return (await waiting(message('rollout.waiting.window', { opensAt: window.opensAt.toISOString() }))) || skipped;
      }
    }
    if (plan.start.length === 0) {
      const byId = new Map(nodes.map((node) => [node.nodeId, node.nodeName]));
      const names = plan.unavailable.map((nodeId) => byId.get(nodeId) ?? nodeId).join(', ');
      return (await waiting(message('rollout.waiting.budget', { unavailable: plan.unavailable.length, nodes: nodes.length, names, allowed: plan.allowed }))) || skipped;
    }
    const alerts = await this.alertsHold(rollout, now);
    if (alerts !== 'NONE') {
      return alerts === 'CHANGED' || skipped;
    }
    await waiting(null);
    const started = new Set(plan.start);
    let unavailable = plan.unavailable.length;
    for (const node of pending.filter((candidate) => started.has(candidate.nodeId))) {
      if (await this.options.rollouts.updateNode(rollout.id, node.nodeId, { phase: 'DRAIN', startedAt: now, problem: null }, 'PENDING')) {
        unavailable += 1;
        await this.auditNode(rollout, node, 'started', message('rollout.node.started', { hostname: node.nodeName, unavailable, allowed: plan.allowed }));
        this.options.observer?.node(rollout.clusterId, rollout.kind, 'started');
        await this.queueNode(rollout.id, node.nodeId);
      }
    }
    return true;
  }

  /**
   * The rollout's nodes as they are now. One that is being removed (or was) is skipped first,
   * wherever it was: the removal owns it now, and it must not hold a slot of the budget. With them,
   * whether any was skipped, and those remediation is working on (not started while it does).
   */
  private async nodesNow(rollout: RolloutEntity, nodes: RolloutNodeEntity[], now: Date): Promise<{ nodes: RolloutNodeEntity[]; skipped: boolean; remediating: ReadonlySet<string> }> {
    const open = nodes.filter((node) => node.phase !== 'DONE' && node.phase !== 'SKIPPED');
    const records = new Map((await this.options.nodes.findMany(open.map((node) => node.nodeId))).map((record) => [record.id, record]));
    const remediating = new Set([...records.values()].filter((record) => record.remediation !== null).map((record) => record.id));
    let skipped = false;
    for (const node of open) {
      const status = records.get(node.nodeId)?.status;
      if (status === 'REMOVING' || status === 'REMOVED') {
        const problem = message('rollout.nodeRemoved', { hostname: node.nodeName, status });
        if (await this.options.rollouts.updateNode(rollout.id, node.nodeId, { phase: 'SKIPPED', problem, finishedAt: now }, node.phase)) {
          skipped = true;
          await this.auditNode(rollout, node, 'skipped', problem);
          this.options.observer?.node(rollout.clusterId, rollout.kind, 'skipped');
        }
      }
    }
    return { nodes: skipped ? await this.options.rollouts.nodesOf(rollout.id) : nodes, skipped, remediating };
  }

  /**
   * Before a node starts: a named alert that fires pauses the rollout; an Alertmanager that does not
   * answer holds it. NONE: nothing holds it; HELD or CHANGED (the rollout changed): start nothing.
   */
  private async alertsHold(rollout: RolloutEntity, now: Date): Promise<'NONE' | 'HELD' | 'CHANGED'> {
    if (rollout.pauseOnAlerts.length === 0 || !this.options.alerts) {
      return 'NONE';
    }
    const answer = await this.options.alerts.firing(rollout.pauseOnAlerts);
    if ('problem' in answer) {
      return (await this.options.rollouts.recordWaiting(rollout.id, answer.problem, now)) ? 'CHANGED' : 'HELD';
    }
    if (answer.firing.length === 0) {
      return 'NONE';
    }
    const reason = message('rollout.pausedOnAlert', { alerts: answer.firing.join(', ') });
    const paused = await this.options.rollouts.moveStatus(rollout.id, ['RUNNING'], 'PAUSED', reason, now);
    if (paused) {
      await this.auditRollout(paused, 'paused', reason, ROLLOUT_ACTOR, false);
      this.options.observer?.rollout(paused.clusterId, paused.kind, 'PAUSED_BY_SERVICE');
    }
    return paused ? 'CHANGED' : 'HELD';
  }

  /** Takes one node through its phases from where it is, while the rollout runs (or, cancelled, back into service). */
  async runNode(rolloutId: string, nodeId: string, lost?: AbortSignal): Promise<void> {
    for (;;) {
      if (lost?.aborted) {
        return;
      }
      const rollout = await this.options.rollouts.find(rolloutId);
      const step = await this.options.rollouts.node(rolloutId, nodeId);
      const node = await this.options.nodes.find(nodeId);
      if (!rollout || !step || !node || !ROLLOUT_ACTIVE_PHASES.has(step.phase) || rollout.status === 'PAUSED' || rollout.status === 'SUCCEEDED') {
        return;
      }
      if (rollout.status === 'CANCELLED' && step.phase === 'DRAIN') {
        await this.skip(rollout, step);
        return;
      }
      const outcome = await this.runPhase(rollout, step, node, lost);
      if (outcome.kind === 'stopped') {
        continue;
      }
      if (outcome.kind === 'pause') {
        await this.options.rollouts.updateNode(rolloutId, nodeId, { problem: outcome.problem });
        const paused = await this.options.rollouts.moveStatus(rolloutId, ['RUNNING'], 'PAUSED', outcome.reason, new Date(this.options.clock.now()));
        this.changed(rollout);
        if (paused) {
          await this.auditRollout(paused, 'paused', outcome.reason, ROLLOUT_ACTOR, false);
          this.options.observer?.rollout(paused.clusterId, paused.kind, 'PAUSED_BY_SERVICE');
        }
        return;
      }
      if (!(await this.options.rollouts.updateNode(rolloutId, nodeId, { ...outcome.progress, phase: outcome.phase, problem: null }, step.phase))) {
        // Moved meanwhile (skipped: a removal took the node): read where it is now.
        continue;
      }
      this.changed(rollout);
      if (outcome.phase === 'DONE') {
        await this.auditNode(rollout, step, 'done', isApplyKind(rollout.kind) ? message('rollout.node.applied', { hostname: step.nodeName }) : message('rollout.node.done', { hostname: step.nodeName }));
        this.options.observer?.node(rollout.clusterId, rollout.kind, 'done');
        await this.options.inspections?.queue(node);
        await this.queueConduct(rollout);
        return;
      }
    }
  }

  private async runPhase(rollout: RolloutEntity, step: RolloutNodeEntity, node: NodeEntity, lost?: AbortSignal): Promise<PhaseOutcome> {
    switch (step.phase) {
      case 'DRAIN':
        return this.drainPhase(rollout, step, lost);
      case 'APPLY':
        return this.applyPhase(rollout, step, node, lost);
      case 'REBOOT':
        return this.rebootPhase(step, node, lost);
      case 'WAIT_READY':
        return this.waitReadyPhase(rollout, step, node, lost);
      case 'UNCORDON':
        return this.uncordonPhase(rollout, step, lost);
      default:
        return { kind: 'stopped' };
    }
  }

  /** Cordons and drains like `kubectl drain --ignore-daemonsets --delete-emptydir-data`; a budget that refuses pauses the rollout, naming it. */
  private async drainPhase(rollout: RolloutEntity, step: RolloutNodeEntity, lost?: AbortSignal): Promise<PhaseOutcome> {
    const watch = await this.watchOrProblem(rollout.clusterId);
    if ('problem' in watch) {
      return this.pauseOn(step, watch.problem);
    }
    const stop = new AbortController();
    let refusal: { pod: string; pdb: string } | null = null;
    const onEvent = (event: DrainEvent): void => {
      if (event.type === 'pod-blocked' && event.pdb && !refusal) {
        refusal = { pod: event.pod, pdb: `${event.pod.split('/')[0]}/${event.pdb}` };
        stop.abort();
      }
    };
    const stopWatching = this.abortWhenNotRunning(rollout.id, stop);
    let result: DrainResult;
    try {
      result = await this.drain(
        watch.client,
        step.nodeName,
        { ignoreDaemonSets: true, deleteEmptyDirData: true, timeoutSeconds: rollout.drainTimeoutSeconds, signal: lost ? AbortSignal.any([lost, stop.signal]) : stop.signal, clock: this.options.clock },
        onEvent,
      );
    } finally {
      stopWatching();
    }
    if (result.ok || result.failure === 'NODE_NOT_FOUND') {
      return { kind: 'next', phase: phaseAfterDrain(rollout.kind) };
    }
    const refused = refusal as { pod: string; pdb: string } | null;
    if (refused) {
      const problem = message('rollout.problem.budget', { pdb: refused.pdb, pod: refused.pod });
      return { kind: 'pause', problem, reason: message('rollout.pausedOnBudget', { hostname: step.nodeName, pdb: refused.pdb, pod: refused.pod }) };
    }
    if (result.failure === 'CANCELLED') {
      return { kind: 'stopped' };
    }
    return this.pauseOn(step, message('rollout.problem.drain', { reason: result.reason }));
  }

  /**
   * UPGRADE, REAPPLY: the agent re-runs the steps whose inputs changed (see applySteps) in an apply
   * run, started once (its id is recorded before it is waited for) and waited for; the node goes on
   * once it succeeded. A run that failed pauses the rollout with its reason, and is forgotten: a
   * resume starts a new one (every step keeps what is already as it should be).
   */
  private async applyPhase(rollout: RolloutEntity, step: RolloutNodeEntity, node: NodeEntity, lost?: AbortSignal): Promise<PhaseOutcome> {
    const runs = this.options.applyRuns;
    if (!runs || !isApplyKind(rollout.kind)) {
      return this.pauseOn(step, message('rollout.noApplyRuns'));
    }
    let runId = step.applyRunId;
    if (runId === null) {
      const started = await this.startApply(rollout, rollout.kind, step, node, lost);
      if ('problem' in started) {
        return this.pauseOn(step, started.problem);
      }
      runId = started.runId;
    }
    for (;;) {
      const current = await this.options.rollouts.find(rollout.id);
      // Paused: the run goes on by itself; the node waits here for the resume.
      if (!current || current.status === 'PAUSED' || lost?.aborted) {
        return { kind: 'stopped' };
      }
      const run = await runs.run(runId);
      if (run.status === 'SUCCEEDED') {
        return { kind: 'next', phase: 'WAIT_READY' };
      }
      if (run.status !== 'RUNNING') {
        await this.options.rollouts.updateNode(rollout.id, step.nodeId, { applyRunId: null });
        return this.pauseOn(step, message('rollout.problem.applyFailed', { run: run.id, reason: run.reasonCoded ? bare(run.reasonCoded) : (run.reason ?? run.status) }));
      }
      await this.options.clock.sleep(this.pollMs, lost);
    }
  }

  private async startApply(rollout: RolloutEntity, kind: ApplyKind, step: RolloutNodeEntity, node: NodeEntity, lost?: AbortSignal): Promise<{ runId: string } | { problem: CodedText }> {
    const record = await this.options.inspections?.view(node.id);
    if (!record) {
      return { problem: message('rollout.nodeNotRecorded', { hostname: node.hostname }) };
    }
    const steps = applySteps(kind, record.files, record.drift);
    let runId: string;
    try {
      runId = (await this.options.applyRuns?.apply(node.id, steps, `${ROLLOUT_ACTOR}:${rollout.id}`, lost))?.id ?? '';
    } catch (error) {
      return { problem: message('rollout.problem.apply', { reason: errorText(error) }) };
    }
    await this.options.rollouts.updateNode(rollout.id, step.nodeId, { applyRunId: runId });
    await this.auditNode(rollout, step, 'applying', message('rollout.node.applying', { hostname: step.nodeName, steps: steps.join(', '), run: runId }));
    return { runId };
  }

  /** Asks the host to reboot, once: a boot id other than the one recorded before says it already did. */
  private async rebootPhase(step: RolloutNodeEntity, node: NodeEntity, lost?: AbortSignal): Promise<PhaseOutcome> {
    let bootId: string;
    try {
      bootId = await this.readBootId(node, lost);
    } catch (error) {
      return this.pauseOn(step, this.sshProblem(error));
    }
    if (step.bootIdBefore && bootId !== step.bootIdBefore) {
      return { kind: 'next', phase: 'WAIT_READY' };
    }
    const before = step.bootIdBefore ?? bootId;
    const at = new Date(this.options.clock.now());
    await this.options.rollouts.updateNode(step.rolloutId, step.nodeId, { bootIdBefore: before, rebootedAt: at });
    let sent = false;
    try {
      const result = await this.options.ssh.run(sshTargetOf(node, this.options.secrets), (session) => {
        sent = true;
        return session.exec(['systemctl', 'reboot'], { timeoutMs: SSH_TIMEOUT_MS, signal: lost });
      }, { signal: lost });
      if (result.exitCode !== 0) {
        return this.pauseOn(step, message('rollout.problem.reboot', { output: (result.stderr || result.stdout).trim().slice(-300) }));
      }
    } catch (error) {
      // A reboot may end the session under the command: that is the reboot working.
      if (!(sent && sshFailureOutcome(error)?.event === 'SSH_UNREACHABLE')) {
        return this.pauseOn(step, this.sshProblem(error));
      }
    }
    return { kind: 'next', phase: 'WAIT_READY' };
  }

  /** Waits for a new boot id, an active kubelet and a Ready Node, until the rollout's ready timeout after the reboot. */
  private async waitReadyPhase(rollout: RolloutEntity, step: RolloutNodeEntity, node: NodeEntity, lost?: AbortSignal): Promise<PhaseOutcome> {
    const deadline = (step.rebootedAt?.getTime() ?? this.options.clock.now()) + rollout.readyTimeoutSeconds * 1000;
    for (;;) {
      const current = await this.options.rollouts.find(rollout.id);
      if (!current || current.status === 'PAUSED' || lost?.aborted) {
        return { kind: 'stopped' };
      }
      const missing = await this.whatIsMissing(rollout, step, node, lost);
      if (missing === null) {
        return { kind: 'next', phase: 'UNCORDON' };
      }
      if (this.options.clock.now() >= deadline) {
        return this.pauseOn(step, message('rollout.problem.notBack', { seconds: rollout.readyTimeoutSeconds, missing: bare(missing) }));
      }
      await this.options.clock.sleep(this.pollMs, lost);
    }
  }

  private async whatIsMissing(rollout: Pick<RolloutEntity, 'clusterId' | 'kind'>, step: RolloutNodeEntity, node: NodeEntity, lost?: AbortSignal): Promise<CodedText | null> {
    let state: { bootId: string; kubelet: string };
    try {
      state = await this.options.ssh.run(sshTargetOf(node, this.options.secrets), async (session) => {
        const boot = await session.exec(['cat', BOOT_ID_PATH], { timeoutMs: SSH_TIMEOUT_MS, signal: lost });
        const kubelet = await session.exec(['systemctl', 'is-active', 'kubelet'], { timeoutMs: SSH_TIMEOUT_MS, signal: lost });
        return { bootId: boot.stdout.trim(), kubelet: kubelet.stdout.trim() };
      }, { signal: lost });
    } catch (error) {
      // Down while it reboots; a host that answers but refuses the login (or shows another key) says so, and so does one an apply run left unreachable.
      const failure = sshFailureOutcome(error);
      return failure && (failure.event !== 'SSH_UNREACHABLE' || rollout.kind !== 'REBOOT') ? message('rollout.problem.ssh', { reason: failure.reason.message }) : message('rollout.missing.boot');
    }
    if (!state.bootId || (rollout.kind === 'REBOOT' && state.bootId === step.bootIdBefore)) {
      return message('rollout.missing.boot');
    }
    if (state.kubelet !== 'active') {
      return message('rollout.missing.kubelet');
    }
    const watch = await this.watchOrProblem(rollout.clusterId);
    if ('problem' in watch) {
      return watch.problem;
    }
    return nodeBackFrom(state.bootId, watch.nodes().find((candidate) => candidate.name === step.nodeName));
  }

  private async uncordonPhase(rollout: RolloutEntity, step: RolloutNodeEntity, lost?: AbortSignal): Promise<PhaseOutcome> {
    const watch = await this.watchOrProblem(rollout.clusterId);
    if ('problem' in watch) {
      return this.pauseOn(step, watch.problem);
    }
    try {
      await uncordonNode(watch.client, step.nodeName, lost);
    } catch (error) {
      return this.pauseOn(step, message('rollout.problem.cluster', { error: errorText(error) }));
    }
    return { kind: 'next', phase: 'DONE', progress: { finishedAt: new Date(this.options.clock.now()) } };
  }

  /** A cancelled rollout's node that was draining: back into service, skipped. */
  private async skip(rollout: RolloutEntity, step: RolloutNodeEntity): Promise<void> {
    const watch = await this.watchOrProblem(rollout.clusterId);
    if ('problem' in watch) {
      throw new Error(watch.problem.message);
    }
    await uncordonNode(watch.client, step.nodeName);
    if (await this.options.rollouts.updateNode(rollout.id, step.nodeId, { phase: 'SKIPPED', finishedAt: new Date(this.options.clock.now()) }, 'DRAIN')) {
      this.changed(rollout);
      await this.auditNode(rollout, step, 'skipped', message('rollout.node.skipped', { hostname: step.nodeName }));
      this.options.observer?.node(rollout.clusterId, rollout.kind, 'skipped');
    }
  }

  /** Tells the cluster's `rolloutChanged` subscribers to read the rollout again. */
  private changed(rollout: Pick<RolloutEntity, 'id' | 'clusterId'>): void {
    this.options.events?.publish(TOPICS.ROLLOUT_CHANGED, rollout.clusterId, { rolloutId: rollout.id } satisfies RolloutChangedPayload);
  }

  private pauseOn(step: RolloutNodeEntity, problem: CodedText): PhaseOutcome {
    return { kind: 'pause', problem, reason: message('rollout.pausedOnNode', { hostname: step.nodeName, problem: bare(problem) }) };
  }

  private sshProblem(error: unknown): CodedText {
    const failure = sshFailureOutcome(error);
    if (!failure) {
      throw error;
    }
    return message('rollout.problem.ssh', { reason: failure.reason.message });
  }

  private async readBootId(node: NodeEntity, lost?: AbortSignal): Promise<string> {
    const result = await this.options.ssh.run(sshTargetOf(node, this.options.secrets), (session) => session.exec(['cat', BOOT_ID_PATH], { timeoutMs: SSH_TIMEOUT_MS, signal: lost }), { signal: lost });
    return result.stdout.trim();
  }

  private async watchOrProblem(clusterId: string): Promise<Pick<ClusterWatch, 'client' | 'nodes'> | { problem: CodedText }> {
    try {
      return await this.options.clusters.watch(clusterId);
    } catch (error) {
      return { problem: message('rollout.problem.cluster', { error: errorText(error) }) };
    }
  }

  /** Aborts `controller` once the rollout is paused or cancelled (checked every poll); returns the stop of that watching. */
  private abortWhenNotRunning(rolloutId: string, controller: AbortController): () => void {
    const timer = setInterval(() => {
      void this.options.rollouts.find(rolloutId).then((rollout) => {
        if (rollout?.status !== 'RUNNING') {
          controller.abort();
        }
      }, () => undefined);
    }, this.pollMs);
    return () => clearInterval(timer);
  }

  private async move(id: string, from: readonly RolloutStatus[], to: RolloutStatus, reason: CodedText | null): Promise<RolloutEntity> {
    const rollout = await this.options.rollouts.get(id);
    const moved = await this.options.rollouts.moveStatus(id, from, to, reason, new Date(this.options.clock.now()));
    if (!moved) {
      throw new PreconditionError(message('rollout.notRunning', { status: rollout.status }), { status: rollout.status });
    }
    this.options.observer?.rollout(moved.clusterId, moved.kind, to);
    this.changed(moved);
    return moved;
  }

  private async selectNodes(input: StartRollout): Promise<NodeEntity[]> {
    if (input.nodeIds && input.nodeIds.length > 0) {
      const found = await this.options.nodes.findMany(input.nodeIds);
      const byId = new Map(found.map((node) => [node.id, node]));
      return input.nodeIds.map((nodeId, index) => {
        const node = byId.get(nodeId);
        if (!node || node.clusterId !== input.clusterId) {
          throw new BadUserInputError(`input.nodeIds.${index}`, message('error.notFound', { kind: 'node', id: nodeId }));
        }
        if (!ELIGIBLE_STATUSES.has(node.status) || !node.sshCredentialsSealed) {
          throw new BadUserInputError(`input.nodeIds.${index}`, message('rollout.nodeNotEligible', { hostname: node.hostname, status: node.status }));
        }
        return node;
      });
    }
    const members = (await this.options.nodes.activeOf(input.clusterId))
      .filter((node) => ELIGIBLE_STATUSES.has(node.status) && node.sshCredentialsSealed)
      .filter((node) => input.labels.every((wanted) => node.labels.some((label) => label.key === wanted.key && label.value === wanted.value)))
      .sort((a, b) => a.hostname.localeCompare(b.hostname));
    if (members.length === 0) {
      throw new PreconditionError(message('rollout.noNodes'));
    }
    return members;
  }

  private async queueConduct(rollout: Pick<RolloutEntity, 'id' | 'clusterId'>, runAt?: Date): Promise<void> {
    await this.options.jobs.enqueue(CONDUCT_TASK, { rolloutId: rollout.id }, { key: `${CONDUCT_TASK}:${rollout.id}`, queue: `cluster:${rollout.clusterId}`, maxAttempts: 3, ...(runAt ? { runAt } : {}) });
  }

  private async queueNode(rolloutId: string, nodeId: string): Promise<void> {
    const node = await this.options.nodes.find(nodeId);
    if (node) {
      await this.options.jobs.enqueue(ROLLOUT_NODE_TASK, { rolloutId, nodeId }, { key: `${ROLLOUT_NODE_TASK}:${rolloutId}:${nodeId}`, queue: hostQueue(node.ip ?? node.hostname), maxAttempts: 5 });
    }
  }

  private async queueActiveNodes(rollout: RolloutEntity): Promise<void> {
    for (const node of await this.options.rollouts.nodesOf(rollout.id)) {
      if (ROLLOUT_ACTIVE_PHASES.has(node.phase)) {
        await this.queueNode(rollout.id, node.nodeId);
      }
    }
  }

  private async auditRollout(rollout: RolloutEntity, action: string, text: CodedText, actor: string, ok = true): Promise<void> {
    this.log.info({ rolloutId: rollout.id, clusterId: rollout.clusterId, action }, text.message);
    await this.options.audit.record({
      actor,
      action: `rollout.${action}`,
      targetType: 'rollout',
      targetId: rollout.id,
      result: ok ? 'SUCCESS' : 'FAILURE',
      detail: { clusterId: rollout.clusterId, kind: rollout.kind, reason: text.message, reasonCode: text.code, reasonParams: text.params },
      requestId: null,
    });
  }

  private async auditNode(rollout: RolloutEntity, step: RolloutNodeEntity, action: string, text: CodedText): Promise<void> {
    this.log.info({ rolloutId: rollout.id, nodeId: step.nodeId, hostname: step.nodeName, action }, text.message);
    await this.options.audit.record({
      actor: ROLLOUT_ACTOR,
      action: `rollout.node.${action}`,
      targetType: 'node',
      targetId: step.nodeId,
      result: 'SUCCESS',
      detail: { rolloutId: rollout.id, hostname: step.nodeName, reason: text.message, reasonCode: text.code, reasonParams: text.params },
      requestId: null,
    });
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a held rollout would do, for its approver: each node in order with the pods its drain evicts and the budgets it meets. */
function blastRadiusOf(preview: RolloutPreview): Record<string, unknown> {
  return {
    allowed: preview.allowed,
    window: preview.window,
    pods: preview.nodes.flatMap((node) => node.drain.pods.map((pod) => ({ pod: `${node.nodeName}: ${pod.pod}`, action: pod.action }))),
    budgets: preview.nodes.flatMap((node) => node.drain.budgets.map((budget) => ({ namespace: budget.namespace, name: budget.name, disruptionsAllowed: budget.disruptionsAllowed }))),
    nodes: preview.nodes.map((node) => node.nodeName),
  };
}
