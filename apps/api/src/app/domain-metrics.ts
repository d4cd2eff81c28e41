import { type Counter, Gauge, type Histogram, type Registry } from 'prom-client';
import type { CsrPendingSummary } from '@ccos/api/data-access-cluster-connections';
import type { JobCounts } from '@ccos/api/data-access-db';
import type { SshPoolStats } from '@ccos/api/data-access-ssh';
import type { AutoscalingObserver } from '@ccos/api/feature-autoscaling';
import type { CsrDecisionObserver } from '@ccos/api/feature-csrs';
import type { RolloutObserver } from '@ccos/api/feature-fleet';
import type { InstallGauges, InstallObserver } from '@ccos/api/feature-installs';
import type { RemediationObserver } from '@ccos/api/feature-remediation';
import type { BlockedDrain, RemovalGauges, RemovalObserver } from '@ccos/api/feature-removals';
import { INSTALL_STEPS } from '@ccos/shared/domain';
import type { CappedMetrics } from './series-cap';

/** Where the gauges read the present at scrape time. */
export interface DomainSources {
  /** Install runs and nodes in Postgres (the same on every replica). */
  readonly installs: Pick<InstallGauges, 'inProgressByStep' | 'waitingByCluster' | 'nodesByStatus'>;
  /** Removal runs in Postgres (the same on every replica). */
  readonly removals: Pick<RemovalGauges, 'inProgressByPhase'>;
  /** Pending CSRs from the watch cache: the cluster's own state, so the same on every replica. */
  pendingCsrs(): CsrPendingSummary[];
  /** This replica's auto-approvers: clusters with auto-approve on and whether it holds their Lease. */
  approverLeadership(): ReadonlyArray<{ readonly clusterId: string; readonly leading: boolean; readonly pausedBy: { readonly pending: number } | null }>;
  /** Drains executing here that PodDisruptionBudgets hold. */
  blockedDrains(): readonly BlockedDrain[];
  /** This replica's SSH sessions. */
  ssh(): SshPoolStats;
  /** Clusters with remediation on, and how many unhealthy members the cap holds it for (0: not held), from Postgres (the same on every replica). */
  remediationHeld(): Promise<Array<{ clusterId: string; unhealthy: number; cap: number }>>;
  /** Member nodes by cluster and health, from Postgres (the same on every replica). */
  nodeHealth(): Promise<Array<{ clusterId: string; state: string; count: number }>>;
  /** Joined nodes with a record of what their hosts run, by cluster and state (CURRENT, DRIFTED, OUTDATED, UNINSPECTED), from Postgres (the same on every replica). */
  hostStates(): Promise<Array<{ clusterId: string; state: string; count: number }>>;
  /** Rollouts in progress by cluster and status (RUNNING, PAUSED), from Postgres (the same on every replica). */
  rollouts(): Promise<Array<{ clusterId: string; status: string; count: number }>>;
  /** Durable jobs in Postgres, by state (the same on every replica). */
  jobs(): Promise<JobCounts>;
  /** How long after the kubelet started the auto-approver may approve a node's CSRs. */
  readonly approvalWindowSeconds: number;
}

/** The cluster's name for a label (ids are unreadable on a dashboard); the id when it cannot be read. */
export type ClusterNameOf = (clusterId: string) => Promise<string>;

const STEP_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600];
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/**
 * Installs, CSRs, removals and SSH as Prometheus metrics. Counters and histograms count what
 * this replica did (each fact is reported by the one replica that stored it, so `sum` over
 * replicas is exact); gauges of shared state (installs, nodes, removals, pending CSRs) are read
 * at scrape time from Postgres or the cluster and agree across replicas (`max` them); gauges of
 * a replica's own state (Lease, SSH, drains it executes) are its own.
 */
export class DomainMetrics {
  readonly stepDuration: Histogram<'step' | 'outcome'>;
  readonly eventLag: Histogram;
  readonly installsFinished: Counter<'outcome' | 'failure_code'>;
  readonly agentEventsRefused: Counter<'reason'>;
  readonly csrDecisions: Counter<'cluster' | 'verdict' | 'decider'>;
  readonly removalsFinished: Counter<'outcome'>;
  readonly evictionsRefused: Counter<'cluster'>;
  readonly autoscalingDecisions: Counter<'kind' | 'node_group'>;
  readonly remediationActions: Counter<'cluster' | 'action'>;
  readonly rolloutNodes: Counter<'cluster' | 'kind' | 'outcome'>;
  readonly rolloutTransitions: Counter<'cluster' | 'kind' | 'status'>;
  private sources: DomainSources | null = null;

  constructor(
    private readonly registry: Registry,
    capped: CappedMetrics,
    private readonly clusterName: ClusterNameOf,
  ) {
    this.stepDuration = capped.histogram({
      name: 'ccos_install_step_duration_seconds',
      help: 'Install step durations, STARTED to SUCCEEDED or FAILED by the agent\'s clock, by step and outcome',
      labelNames: ['step', 'outcome'] as const,
      buckets: STEP_BUCKETS,
    });
    this.eventLag = capped.histogram({
      name: 'ccos_agent_event_lag_seconds',
      help: 'Time from a step event occurring on the host to it being stored (spooling, network, retries)',
      buckets: LAG_BUCKETS,
    });
    this.installsFinished = capped.counter({
      name: 'ccos_install_runs_finished_total',
      help: 'Install runs ended, by outcome (SUCCEEDED, FAILED, CANCELLED) and failure code (the agent\'s, or AGENT_NOT_STARTED, RUN_DEADLINE, SUPERSEDED; none on success)',
      labelNames: ['outcome', 'failure_code'] as const,
    });
    this.agentEventsRefused = capped.counter({
      name: 'ccos_agent_events_refused_total',
      help: 'Agent step events refused for good, by reason: RUN_FINISHED (the run had ended), EVENT_COUNT or EVENT_BYTES (past the run\'s cap)',
      labelNames: ['reason'] as const,
    });
    this.csrDecisions = capped.counter({
      name: 'ccos_csr_decisions_total',
      help: 'CSR decisions written, by cluster, verdict (APPROVED, DENIED, LEFT_PENDING) and decider (operator, forced, auto-approver)',
      labelNames: ['cluster', 'verdict', 'decider'] as const,
    });
    this.removalsFinished = capped.counter({
      name: 'ccos_removal_runs_finished_total',
      help: 'Removal runs ended, by outcome (SUCCEEDED, FAILED, CANCELLED)',
      labelNames: ['outcome'] as const,
    });
    this.evictionsRefused = capped.counter({
      name: 'ccos_evictions_refused_total',
      help: 'Evictions the API server refused with 429 because a PodDisruptionBudget allows no disruption now, by cluster',
      labelNames: ['cluster'] as const,
    });
    this.autoscalingDecisions = capped.counter({
      name: 'ccos_autoscaling_decisions_total',
      help: 'Node group decisions stored, by kind (RESERVE, INSTALL, INSTALLED, OUT_OF_RESOURCES, DELETE, RETURN_TO_POOL, REINSTALL_REQUIRED, ...) and node group',
      labelNames: ['kind', 'node_group'] as const,
    });
    this.remediationActions = capped.counter({
      name: 'ccos_remediation_actions_total',
      help: 'Remediation actions, by cluster and action (restart_kubelet, reboot, recovered, exhausted, held, released)',
      labelNames: ['cluster', 'action'] as const,
    });
    this.rolloutNodes = capped.counter({
      name: 'ccos_rollout_nodes_total',
      help: 'Nodes of rollouts, by cluster, kind and outcome (started, done, skipped)',
      labelNames: ['cluster', 'kind', 'outcome'] as const,
    });
    this.rolloutTransitions = capped.counter({
      name: 'ccos_rollout_transitions_total',
      help: 'Rollouts moving to a status, by cluster, kind and status (RUNNING, PAUSED by an operator, PAUSED_BY_SERVICE on a budget or a failed node, SUCCEEDED, CANCELLED)',
      labelNames: ['cluster', 'kind', 'status'] as const,
    });
    this.gauges();
  }

  /** Gives the gauges what they read (once the services exist). */
  follow(sources: DomainSources): void {
    this.sources = sources;
  }

  readonly installObserver: InstallObserver = {
    stepFinished: (step, outcome, seconds) => this.stepDuration.observe({ step, outcome }, seconds),
    eventStored: (lagSeconds) => this.eventLag.observe(lagSeconds),
    runFinished: (outcome, failureCode) => this.installsFinished.inc({ outcome, failure_code: failureCode }),
    eventRefused: (reason) => this.agentEventsRefused.inc({ reason }),
  };

  readonly removalObserver: RemovalObserver = {
    runFinished: (outcome) => this.removalsFinished.inc({ outcome }),
    evictionRefused: (clusterId) => void this.clusterName(clusterId).then((cluster) => this.evictionsRefused.inc({ cluster })),
  };

  readonly autoscalingObserver: AutoscalingObserver = {
    decision: (kind, group) => this.autoscalingDecisions.inc({ kind, node_group: group }),
  };

  readonly remediationObserver: RemediationObserver = {
    action: (clusterId, action) => void this.clusterName(clusterId).then((cluster) => this.remediationActions.inc({ cluster, action })),
  };

  readonly rolloutObserver: RolloutObserver = {
    node: (clusterId, kind, outcome) => void this.clusterName(clusterId).then((cluster) => this.rolloutNodes.inc({ cluster, kind, outcome })),
    rollout: (clusterId, kind, status) => void this.clusterName(clusterId).then((cluster) => this.rolloutTransitions.inc({ cluster, kind, status })),
  };

  readonly csrDecisionObserver: CsrDecisionObserver = ({ clusterId, decision, decider }) =>
    void this.clusterName(clusterId).then((cluster) => this.csrDecisions.inc({ cluster, verdict: decision, decider }));

  /**
   * A gauge of shared state read at scrape time: one series per row the source answers, with the
   * labels and value the row gives; none while the source fails (the scrape still answers).
   */
  private rowsGauge<Row, Label extends string>(gauge: {
    readonly name: string;
    readonly help: string;
    readonly labelNames: readonly Label[];
    readonly rows: () => Promise<readonly Row[]> | undefined;
    readonly series: (row: Row) => Promise<[Partial<Record<Label, string>>, number]> | [Partial<Record<Label, string>>, number];
  }): void {
    const metric: Gauge<Label> = new Gauge({
      name: gauge.name,
      help: gauge.help,
      labelNames: gauge.labelNames,
      registers: [this.registry],
      collect: async () => {
        const rows = (await gauge.rows()?.catch(() => null)) ?? [];
        const series = await Promise.all(rows.map(gauge.series));
        metric.reset();
        for (const [labels, value] of series) {
          metric.set(labels, value);
        }
      },
    });
  }

  private gauges(): void {
    const registers = [this.registry];
    // Arrow functions: `this` stays the DomainMetrics although prom-client calls collect on the gauge.
    const installsInProgress = new Gauge({
      name: 'ccos_installs_in_progress',
      help: 'Install runs running now, by the step they are at; runs waiting for an install slot are ccos_installs_waiting (shared state: the same on every replica)',
      labelNames: ['step'] as const,
      registers,
      collect: async () => {
        installsInProgress.reset();
        for (const step of INSTALL_STEPS) {
          installsInProgress.set({ step }, 0);
        }
        for (const { step, count } of (await this.sources?.installs.inProgressByStep().catch(() => [])) ?? []) {
          installsInProgress.set({ step }, count);
        }
      },
    });
    this.rowsGauge({
      name: 'ccos_installs_waiting',
      help: 'Install runs asked for and waiting for one of their cluster\'s install slots (installsAtOnce), by cluster (shared state)',
      labelNames: ['cluster'],
      rows: () => this.sources?.installs.waitingByCluster(),
      series: async ({ clusterId, count }) => [{ cluster: await this.clusterName(clusterId) }, count],
    });
    this.rowsGauge({
      name: 'ccos_nodes',
      help: 'Nodes this service knows, by cluster and status (REMOVED left out; shared state)',
      labelNames: ['cluster', 'status'],
      rows: () => this.sources?.installs.nodesByStatus(),
      series: async ({ clusterId, status, count }) => [{ cluster: await this.clusterName(clusterId), status }, count],
    });
    this.rowsGauge({
      name: 'ccos_node_health',
      help: 'Member nodes (JOINED, DRAIN_FAILED, REMOVING) by cluster and health: HEALTHY, UNHEALTHY (not Ready, kubelet silent, host unreachable over SSH or kubelet unit inactive), UNKNOWN; shared state',
      labelNames: ['cluster', 'state'],
      rows: () => this.sources?.nodeHealth(),
      series: async ({ clusterId, state, count }) => [{ cluster: await this.clusterName(clusterId), state }, count],
    });
    this.rowsGauge({
      name: 'ccos_host_state',
      help: 'Joined nodes with a record of what their hosts run, by cluster and state: CURRENT, DRIFTED (files the install wrote changed or gone at the last inspection), OUTDATED (installed from another artifact set than the cluster\'s now), UNINSPECTED; shared state',
      labelNames: ['cluster', 'state'],
      rows: () => this.sources?.hostStates(),
      series: async ({ clusterId, state, count }) => [{ cluster: await this.clusterName(clusterId), state }, count],
    });
    this.rowsGauge({
      name: 'ccos_rollouts',
      help: 'Rollouts in progress by cluster and status: RUNNING, PAUSED (by an operator, or by the service on a PodDisruptionBudget that refuses or a node that failed: the rollout\'s reason says); shared state',
      labelNames: ['cluster', 'status'],
      rows: () => this.sources?.rollouts(),
      series: async ({ clusterId, status, count }) => [{ cluster: await this.clusterName(clusterId), status }, count],
    });
    this.rowsGauge({
      name: 'ccos_remediation_held',
      help: 'Unhealthy members of each cluster whose remediation the cap holds now, 0 while not held (clusters with remediation off are absent); shared state',
      labelNames: ['cluster'],
      rows: () => this.sources?.remediationHeld(),
      series: async ({ clusterId, unhealthy }) => [{ cluster: await this.clusterName(clusterId) }, unhealthy],
    });
    const pending = new Gauge({
      name: 'ccos_csrs_pending',
      help: 'Pending CSRs by cluster, from the watch cache (the cluster\'s state: the same on every replica)',
      labelNames: ['cluster'] as const,
      registers,
      collect: () => {
        pending.reset();
        for (const summary of this.sources?.pendingCsrs() ?? []) {
          pending.set({ cluster: summary.clusterName }, summary.pending);
        }
      },
    });
    const oldest = new Gauge({
      name: 'ccos_csrs_pending_oldest_age_seconds',
      help: 'Age of the oldest pending CSR by cluster (0 when none is pending)',
      labelNames: ['cluster'] as const,
      registers,
      collect: () => {
        oldest.reset();
        const now = Date.now();
        for (const summary of this.sources?.pendingCsrs() ?? []) {
          oldest.set({ cluster: summary.clusterName }, summary.oldestCreatedAt === null ? 0 : Math.max(0, (now - summary.oldestCreatedAt) / 1000));
        }
      },
    });
    const window = new Gauge({
      name: 'ccos_csr_approval_window_seconds',
      help: 'CSR_APPROVAL_WINDOW_MINUTES in seconds: how long after the kubelet started its CSRs may be auto-approved',
      registers,
      collect: () => {
        window.set(this.sources?.approvalWindowSeconds ?? 0);
      },
    });
    const leader = new Gauge({
      name: 'ccos_csr_approver_leader',
      help: '1 when this replica holds the cluster\'s auto-approver Lease, else 0; only clusters with auto-approve on',
      labelNames: ['cluster'] as const,
      registers,
      collect: async () => {
        const leadership = this.sources?.approverLeadership() ?? [];
        const names = await Promise.all(leadership.map(({ clusterId }) => this.clusterName(clusterId)));
        leader.reset();
        leadership.forEach(({ leading }, index) => leader.set({ cluster: names[index] ?? '' }, leading ? 1 : 0));
      },
    });
    const paused = new Gauge({
      name: 'ccos_csr_approver_paused',
      help: '1 while the leading auto-approver approves nothing because more CSRs are pending than CSR_APPROVER_MAX_PENDING, else 0',
      labelNames: ['cluster'] as const,
      registers,
      collect: async () => {
        const leading = (this.sources?.approverLeadership() ?? []).filter((entry) => entry.leading);
        const names = await Promise.all(leading.map(({ clusterId }) => this.clusterName(clusterId)));
        paused.reset();
        leading.forEach(({ pausedBy }, index) => paused.set({ cluster: names[index] ?? '' }, pausedBy ? 1 : 0));
      },
    });
    this.rowsGauge({
      name: 'ccos_removals_in_progress',
      help: 'Removal runs running now, by phase (shared state)',
      labelNames: ['phase'],
      rows: () => this.sources?.removals.inProgressByPhase(),
      series: ({ phase, count }) => [{ phase }, count],
    });
    const drainLabels = async (drain: BlockedDrain) => ({ cluster: await this.clusterName(drain.clusterId), node: drain.nodeName });
    const blocked = new Gauge({
      name: 'ccos_removal_drain_blocked_seconds',
      help: 'How long PodDisruptionBudgets have held a drain this replica executes (since the first refused eviction after the last eviction), by cluster and node',
      labelNames: ['cluster', 'node'] as const,
      registers,
      collect: async () => {
        const drains = this.sources?.blockedDrains() ?? [];
        const labels = await Promise.all(drains.map(drainLabels));
        blocked.reset();
        const now = Date.now();
        drains.forEach((drain, index) => blocked.set(labels[index] ?? {}, Math.max(0, (now - drain.since) / 1000)));
      },
    });
    const timeout = new Gauge({
      name: 'ccos_removal_drain_timeout_seconds',
      help: 'The drain timeout of each drain in ccos_removal_drain_blocked_seconds (0: none)',
      labelNames: ['cluster', 'node'] as const,
      registers,
      collect: async () => {
        const drains = this.sources?.blockedDrains() ?? [];
        const labels = await Promise.all(drains.map(drainLabels));
        timeout.reset();
        drains.forEach((drain, index) => timeout.set(labels[index] ?? {}, drain.timeoutSeconds));
      },
    });
    const inUse = new Gauge({
      name: 'ccos_ssh_sessions_in_use',
      help: 'SSH sessions this replica has open now',
      registers,
      collect: () => {
        inUse.set(this.sources?.ssh().active ?? 0);
      },
    });
    const waiting = new Gauge({
      name: 'ccos_ssh_sessions_waiting',
      help: 'SSH sessions waiting for a slot of SSH_POOL_SIZE on this replica',
      registers,
      collect: () => {
        waiting.set(this.sources?.ssh().queued ?? 0);
      },
    });
    const jobs = new Gauge({
      name: 'ccos_jobs',
      help: 'Durable jobs by state: waiting (retries included), running, failed (used up their attempts; an ADMIN retries them); shared state',
      labelNames: ['state'] as const,
      registers,
      collect: async () => {
        const counts = await this.sources?.jobs().catch(() => null);
        jobs.reset();
        if (counts) {
          jobs.set({ state: 'waiting' }, counts.waiting);
          jobs.set({ state: 'running' }, counts.running);
          jobs.set({ state: 'failed' }, counts.failed);
        }
      },
    });
  }
}
