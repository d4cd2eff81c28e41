import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import type { ClusterConnections, ClusterDirectory } from '@ccos/api/data-access-cluster-connections';
import type { ClusterEntity } from '@ccos/api/data-access-db';
import type { InstallRunNoticeInput } from '@ccos/api/data-access-db';
import { type KubeClient, type LeaderElector, startLeaderElection } from '@ccos/api/data-access-kube';
import type { AuditSink, EventBus } from '@ccos/api/util-graphql';
import type { CsrPolicyPath, CsrVerdict } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import { type BackoffPolicy, backoffDelayMs, type Clock } from '@ccos/shared/util-timing';
import { AUTO_APPROVER_ACTOR, AUTO_APPROVER_CONDITION_REASONS, type CsrDecisionLog } from './csr-decision.log';
import type { CsrService, CsrSnapshot } from './csr.service';

/** Notices raised on a node's install run (feature-installs' RunNoticeBoard: stored, then announced to the run's followers). */
export interface RunNotices {
  raise(notice: InstallRunNoticeInput & { readonly nodeId: string }): Promise<void>;
}

/** Topic on which any replica announces that a cluster was registered or its settings changed. */
export const CLUSTER_SETTINGS_CHANGED = 'CLUSTER_SETTINGS_CHANGED';

export interface ClusterSettingsChangedPayload {
  readonly clusterId: string;
}

/** Tells the auto-approvers of every replica to look at a cluster again (wire it to ClusterService). */
export function announceClusterSettingsChanged(events: EventBus, clusterId: string): void {
  const payload: ClusterSettingsChangedPayload = { clusterId };
  events.publish(CLUSTER_SETTINGS_CHANGED, payload);
}

/** The Lease the replicas compete for, in each cluster. */
export const DEFAULT_APPROVER_LEASE_NAME = 'ccos-scaler-csr-approver';
export const DEFAULT_APPROVER_LEASE_NAMESPACE = 'kube-system';

/**
 * Shorter than client-go's 15/10/2 s: a kubelet waiting for its certificate is a node not joining,
 * so when the replica holding the Lease dies another one approves within 12 s (lease duration plus
 * one jittered retry), not 17. Renewing every 2 s stays as client-go does it.
 */
export const APPROVER_LEASE_TIMING = { leaseDurationSeconds: 10, renewDeadlineSeconds: 7, retryPeriodSeconds: 2 } as const;

/** A decision the cluster refused or that failed on the way is tried again after 1 s, 2 s … up to 60 s, without waiting for a CSR event. */
export const DECISION_RETRY_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 60_000 };

/**
 * Above this many pending CSRs in one cluster the approver approves none (it still denies impostors
 * and duplicates): a flood of CSRs means someone is filing them, not that hundreds of machines are
 * joining (the machine-approver's maxPending guard). CSR_APPROVER_MAX_PENDING changes it.
 */
export const DEFAULT_MAX_PENDING_CSRS = 500;

export interface AutoApproverOptions {
  /** Namespace of the Lease in each cluster. Default kube-system. */
  readonly leaseNamespace?: string;
  /** Default ccos-scaler-csr-approver. */
  readonly leaseName?: string;
  /** This replica's identity in the Lease. Default `<hostname>_<random>`. */
  readonly identity?: string;
  /** APPROVER_LEASE_TIMING by default. */
  readonly leaseDurationSeconds?: number;
  readonly renewDeadlineSeconds?: number;
  readonly retryPeriodSeconds?: number;
  /** Clear the Lease holder on a clean stop, so another replica takes over at once. Default true. */
  readonly releaseOnStop?: boolean;
  /** Paces the Lease (retries, renewals, expiry); tests pass a virtual one. Default: the process's clock. */
  readonly leaseClock?: Clock;
  /** Safety net for a missed settings announcement: re-read the cluster list this often. Default 30 s. */
  readonly clusterResyncMs?: number;
  /** While leading, decide again this often even without a CSR event. Default 60 s. */
  readonly csrResyncMs?: number;
  /** How long a failed decision waits before it is tried again. Default DECISION_RETRY_BACKOFF. */
  readonly retryBackoff?: BackoffPolicy;
  /** Approve nothing while more CSRs than this are pending in the cluster. Default DEFAULT_MAX_PENDING_CSRS. */
  readonly maxPending?: number;
  /** Where approvals and denials of the auto-approver are written, next to the operators' mutations. */
  readonly audit?: AuditSink;
  /** Where an impostor's denied CSR is raised on the node's install run. */
  readonly notices?: RunNotices;
  /** Told about every impostor's CSR denied (the metric). */
  readonly onImpostorDenied?: (event: ImpostorDenied) => void;
}

/** A client CSR for a node being installed here, filed by someone other than its run's identity, and denied. */
export interface ImpostorDenied {
  readonly clusterId: string;
  readonly csr: string;
  readonly node: string | null;
  /** `spec.username` of the CSR: who filed it, as the API server authenticated them. */
  readonly requester: string;
}

/** What one leading approver did, for tests and metrics. */
export interface ApproverCounters {
  approved: number;
  denied: number;
  leftPending: number;
  /** Of the denied: impostors. */
  impostors: number;
  /** Decisions (or whole passes) that failed and were scheduled again with backoff. */
  retries: number;
}

/** The approver of one cluster as the metrics and the API see it. */
export interface ApproverLeadership {
  readonly clusterId: string;
  readonly leading: boolean;
  /** Set while the max-pending guard holds approvals back. */
  readonly pausedBy: PendingGuard | null;
}

/** Why approvals are held back: more CSRs pending than the limit. */
export interface PendingGuard {
  readonly pending: number;
  readonly max: number;
}

/** Whether the cluster's switch for a policy path is on: csrAutoApprove for joins, autoApproveRenewals for renewals. */
export function autoApproves(cluster: Pick<ClusterEntity, 'csrAutoApprove' | 'autoApproveRenewals'>, path: CsrPolicyPath): boolean {
  return path === 'RENEWAL' ? cluster.autoApproveRenewals : cluster.csrAutoApprove;
}

/** Whether any of the cluster's auto-approve switches is on. */
function anyAutoApprove(cluster: Pick<ClusterEntity, 'csrAutoApprove' | 'autoApproveRenewals'>): boolean {
  return cluster.csrAutoApprove || cluster.autoApproveRenewals;
}

/**
 * The CSR auto-approver: for each cluster with csrAutoApprove or autoApproveRenewals on, a controller that decides
 * every pending CSR as soon as the watch reports it (approve when every policy check holds,
 * deny superseded duplicates, otherwise leave it pending and record why once). One replica
 * at a time decides per cluster: the holder of the cluster's Lease (client-go leader
 * election). Settings changes and new clusters are picked up from an announcement on the
 * event bus; a slow resync of the cluster list covers a lost announcement.
 */
export class CsrAutoApprover {
  private readonly approvers = new Map<string, ClusterApprover>();
  private readonly identity: string;
  private readonly log: Logger;
  private stopListening: (() => void) | null = null;
  private settingsLoop: Promise<void> | null = null;
  private settingsIterator: AsyncIterator<ClusterSettingsChangedPayload> | null = null;
  private resyncTimer: NodeJS.Timeout | null = null;
  private reconciling: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly clusters: ClusterDirectory,
    private readonly watches: ClusterConnections,
    private readonly csrs: CsrService,
    private readonly decisions: CsrDecisionLog,
    private readonly events: EventBus,
    logger: Logger,
    private readonly options: AutoApproverOptions = {},
  ) {
    this.identity = options.identity ?? `${hostname()}_${randomUUID().slice(0, 8)}`;
    this.log = logger.child({ component: 'csr-auto-approver', identity: this.identity });
  }

  /** Starts watching every registered cluster and an approver for each with auto-approve on. */
  async start(): Promise<void> {
    this.stopListening = this.watches.onCsrEvent((clusterId) => this.approvers.get(clusterId)?.poke());
    const iterable = this.events.subscribe(CLUSTER_SETTINGS_CHANGED) as AsyncIterable<ClusterSettingsChangedPayload>;
    this.settingsIterator = iterable[Symbol.asyncIterator]();
    this.settingsLoop = this.listenForSettings(this.settingsIterator);
    this.resyncTimer = setInterval(() => void this.reconcileClusters(), this.options.clusterResyncMs ?? 30_000);
    this.resyncTimer.unref();
    await this.reconcileClusters();
  }

  /** Whether this replica currently decides the cluster's CSRs. */
  isLeading(clusterId: string): boolean {
    return this.approvers.get(clusterId)?.leading ?? false;
  }

  /** Every cluster with auto-approve on, and whether this replica holds its Lease now. */
  leadership(): ApproverLeadership[] {
    return [...this.approvers].map(([clusterId, approver]) => ({ clusterId, leading: approver.leading, pausedBy: approver.pausedBy }));
  }

  /** What this replica's approver of a cluster has done so far. */
  counters(clusterId: string): ApproverCounters {
    return { ...(this.approvers.get(clusterId)?.counters ?? { approved: 0, denied: 0, leftPending: 0, impostors: 0, retries: 0 }) };
  }

  /** Re-reads the cluster list now: starts and stops approvers to match csrAutoApprove. */
  reconcileClusters(): Promise<void> {
    this.reconciling = this.reconciling.then(() => this.reconcileOnce()).catch((error: unknown) => this.log.warn({ err: error }, 'could not read the clusters'));
    return this.reconciling;
  }

  /** Stops every approver (releasing its Lease) and the listeners. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resyncTimer) {
      clearInterval(this.resyncTimer);
    }
    this.stopListening?.();
    await this.settingsIterator?.return?.();
    await this.settingsLoop;
    await this.reconciling;
    await Promise.all([...this.approvers.values()].map((approver) => approver.stop()));
    this.approvers.clear();
  }

  private async listenForSettings(iterator: AsyncIterator<ClusterSettingsChangedPayload>): Promise<void> {
    for (;;) {
      const next = await iterator.next();
      if (next.done || this.stopped) {
        return;
      }
      this.log.debug({ clusterId: next.value.clusterId }, 'cluster settings changed');
      await this.reconcileClusters();
    }
  }

  private async reconcileOnce(): Promise<void> {
    if (this.stopped) {
      return;
    }
    const clusters = await this.clusters.list();
    for (const cluster of clusters) {
      // Every cluster is watched, so csrChanged and the install's pending-CSR names stay current.
      const watch = await this.watches.ensure(cluster.id).catch((error: unknown) => {
        this.log.warn({ err: error, clusterId: cluster.id }, 'cannot watch the cluster');
        return null;
      });
      const running = this.approvers.get(cluster.id);
      if (anyAutoApprove(cluster) && !running && watch) {
        const approver = new ClusterApprover(cluster.id, this.identity, watch.client, this.csrs, this.decisions, this.log, this.options);
        this.approvers.set(cluster.id, approver);
        approver.start();
        this.log.info({ clusterId: cluster.id, cluster: cluster.name }, 'CSR auto-approve on: competing for the lease');
      } else if (!anyAutoApprove(cluster) && running) {
        this.approvers.delete(cluster.id);
        await running.stop();
        this.log.info({ clusterId: cluster.id, cluster: cluster.name }, 'CSR auto-approve off: approver stopped');
      } else if (running) {
        // The bootstrap style may have changed: decide again.
        running.poke();
      }
    }
    const known = new Set(clusters.map((cluster) => cluster.id));
    for (const [clusterId, approver] of this.approvers) {
      if (!known.has(clusterId)) {
        this.approvers.delete(clusterId);
        await approver.stop();
      }
    }
  }
}

const DECISION_CONCURRENCY = 8;
const NOTHING_QUEUED = { lastStarted: Promise.resolve() } as const;

/** The approver of one cluster: a Lease candidate that decides CSRs while it leads. */
class ClusterApprover {
  readonly counters: ApproverCounters = { approved: 0, denied: 0, leftPending: 0, impostors: 0, retries: 0 };
  /** Set while more CSRs are pending than the guard allows. */
  pausedBy: PendingGuard | null = null;
  private elector: LeaderElector | null = null;
  private session: AbortSignal | null = null;
  private running: Promise<void> | null = null;
  private dirty = false;
  /** CSRs decided (or recorded as left pending) during this leadership, so a stale cache is not acted on twice. */
  private readonly handled = new Map<string, 'DECIDED' | 'LEFT_PENDING'>();
  /** Failures in a row per CSR name (WHOLE_PASS for a pass that failed before deciding), for the backoff. */
  private readonly failures = new Map<string, number>();
  private retryTimer: NodeJS.Timeout | null = null;
  private retryAt = Number.POSITIVE_INFINITY;
  private readonly log: Logger;
  /** One pool for every pass: a CSR that arrives while others are being decided joins them at once. */
  private readonly decisionPool = pLimit(DECISION_CONCURRENCY);
  /** CSRs queued or being decided, so a later pass does not queue them again. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly clusterId: string,
    private readonly identity: string,
    private readonly client: KubeClient,
    private readonly csrs: CsrService,
    private readonly decisions: CsrDecisionLog,
    logger: Logger,
    private readonly options: AutoApproverOptions,
  ) {
    this.log = logger.child({ clusterId });
  }

  get leading(): boolean {
    return this.session !== null && !this.session.aborted;
  }

  start(): void {
    this.elector = startLeaderElection(this.client, {
      namespace: this.options.leaseNamespace ?? DEFAULT_APPROVER_LEASE_NAMESPACE,
      name: this.options.leaseName ?? DEFAULT_APPROVER_LEASE_NAME,
      // Two registrations of one real cluster in one process must not share a holder identity.
      identity: `${this.identity}/${this.clusterId.slice(0, 8)}`,
      leaseDurationSeconds: this.options.leaseDurationSeconds ?? APPROVER_LEASE_TIMING.leaseDurationSeconds,
      renewDeadlineSeconds: this.options.renewDeadlineSeconds ?? APPROVER_LEASE_TIMING.renewDeadlineSeconds,
      retryPeriodSeconds: this.options.retryPeriodSeconds ?? APPROVER_LEASE_TIMING.retryPeriodSeconds,
      releaseOnStop: this.options.releaseOnStop,
      clock: this.options.leaseClock,
      onStartedLeading: (signal) => this.lead(signal),
      onNewLeader: (leader) => this.log.info({ leader }, 'CSR approver leader'),
      onError: (error) => this.log.warn({ err: error }, 'leader election request failed'),
    });
  }

  /** Decide again soon (a CSR changed, or the settings did). */
  poke(): void {
    if (!this.leading) {
      return;
    }
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  async stop(): Promise<void> {
    this.cancelRetry();
    await this.elector?.stop();
    await this.running;
    await Promise.all(this.inFlight.values());
  }

  private lead(signal: AbortSignal): void {
    this.session = signal;
    this.handled.clear();
    this.log.info('leading: deciding CSRs');
    const resync = setInterval(() => this.poke(), this.options.csrResyncMs ?? 60_000);
    resync.unref();
    signal.addEventListener('abort', () => {
      clearInterval(resync);
      this.cancelRetry();
      this.failures.clear();
      this.pausedBy = null;
      this.log.info('no longer leading');
    }, { once: true });
    this.poke();
  }

  private async loop(): Promise<void> {
    do {
      this.dirty = false;
      try {
        const { lastStarted } = await this.reconcile();
        this.failures.delete(WHOLE_PASS);
        // The next pass waits until this one's last CSR is being decided: passes stay few, and a
        // CSR that arrived meanwhile is queued behind those still waiting, not after all of them end.
        await lastStarted;
      } catch (error) {
        const delayMs = this.retryLater(WHOLE_PASS);
        this.log.warn({ err: error, retryInMs: delayMs }, 'deciding CSRs failed; trying again after a pause or with the next change');
      }
    } while (this.dirty && this.leading);
  }

  /** Queues the pending CSRs not queued yet; `lastStarted` resolves when the last of them is being decided. */
  private async reconcile(): Promise<{ readonly lastStarted: Promise<void> }> {
    if (!this.leading) {
      return NOTHING_QUEUED;
    }
    // The snapshot reads the cluster's settings too: auto-approve may have been turned off meanwhile.
    const snapshot = await this.csrs.snapshot(this.clusterId);
    const { cluster } = snapshot;
    if (!anyAutoApprove(cluster)) {
      return NOTHING_QUEUED;
    }
    const pending = snapshot.csrs.filter((csr) => csr.state === 'Pending' && this.handled.get(csr.name) !== 'DECIDED');
    const guard = this.checkPendingGuard(pending.length);
    const work = pending
      .map((csr) => ({ name: csr.name, verdict: switchedOff(snapshot.verdictOf(csr.name), cluster) }))
      .map(({ name, verdict }) => ({ name, verdict: verdict && guard ? heldByGuard(verdict, guard) : verdict }))
      // With join auto-approve off, join CSRs are the operator's as before: nothing is recorded for them.
      .filter(({ verdict }) => verdict !== null)
      .map(({ name, verdict }) => ({ name, verdict: verdict as CsrVerdict }))
      // Under the guard the approver does the least it must: it says why approvals wait and denies impostors
      // and duplicates; the flood's own reasons are recorded once it has passed.
      .filter(({ verdict }) => !guard || verdict.decision !== 'LEAVE_PENDING' || verdict.reasonCode === HELD_BY_GUARD);
    // Approvals first: a superseded duplicate is denied only after its successor is approved.
    work.sort((a, b) => rank(a.verdict) - rank(b.verdict));
    // A pool, not rounds: a slow decision holds one slot, not the seven beside it.
    let lastStarted = Promise.resolve();
    for (const { name, verdict } of work) {
      if (this.inFlight.has(name) || this.handled.get(name) === 'DECIDED') {
        continue;
      }
      let started: () => void = () => undefined;
      lastStarted = new Promise<void>((resolve) => (started = resolve));
      const decided = this.decisionPool(async () => {
        started();
        if (this.leading) {
          await this.decide(snapshot, name, verdict);
        }
      }).finally(() => this.inFlight.delete(name));
      this.inFlight.set(name, decided);
    }
    return { lastStarted };
  }

  private async decide(snapshot: CsrSnapshot, name: string, verdict: CsrVerdict): Promise<void> {
    const nodeId = snapshot.nodeIdOf(verdict);
    const base = { clusterId: this.clusterId, csrName: name, nodeId, actor: AUTO_APPROVER_ACTOR, checks: verdict.checks };
    const signal = this.session ?? undefined;
    try {
      if (verdict.decision === 'APPROVE') {
        const result = await this.csrs.writeDecision(snapshot, name, {
          verdict,
          decision: 'APPROVED',
          condition: { reason: AUTO_APPROVER_CONDITION_REASONS.approved, message: `auto-approved: ${verdict.reason}` },
          record: { actor: AUTO_APPROVER_ACTOR, reason: message('csr.decision.autoApproved', { reason: verdictReason(verdict) }) },
          signal,
          beforeRecord: async () => {
            // Counted with the cluster's write: the audit entry and the decision row come after it.
            this.counters.approved += 1;
            await this.audit('approveCsr', name, verdict);
          },
        });
        this.handled.set(name, 'DECIDED');
        this.failures.delete(name);
        if (result.ok && result.changed) {
          this.log.info({ csr: name, node: verdict.node }, 'CSR auto-approved');
        } else if (!result.ok) {
          this.log.info({ csr: name, reason: result.reason }, 'CSR could not be approved');
        }
      } else if (verdict.decision === 'DENY_IMPOSTOR' || verdict.decision === 'DENY_SUPERSEDED') {
        const impostor = verdict.decision === 'DENY_IMPOSTOR';
        const result = await this.csrs.writeDecision(snapshot, name, {
          verdict,
          decision: 'DENIED',
          condition: { reason: AUTO_APPROVER_CONDITION_REASONS[impostor ? 'impostor' : 'superseded'], message: verdict.reason },
          record: { actor: AUTO_APPROVER_ACTOR, reason: coded(verdict) },
          signal,
          beforeRecord: async (csr) => {
            this.counters.denied += 1;
            if (impostor) {
              this.counters.impostors += 1;
              await this.raiseImpostor(snapshot, name, verdict, csr.username ?? '');
            } else {
              await this.audit('denyCsr', name, verdict);
            }
          },
        });
        this.handled.set(name, 'DECIDED');
        if (result.ok && result.changed && impostor) {
          this.log.warn({ csr: name, node: verdict.node, requester: result.csr.username, reason: verdict.reason }, 'impostor CSR denied');
        } else if (result.ok && result.changed) {
          this.log.info({ csr: name, node: verdict.node, reason: verdict.reason }, 'superseded CSR denied');
        }
      } else if (verdict.decision === 'LEAVE_TO_CLUSTER') {
        // The cluster's own approver renews a node's client certificate: nothing to do or record.
        this.handled.set(name, 'LEFT_PENDING');
      } else if (!this.handled.has(name)) {
        const written = await this.decisions.recordLeftPendingOnce({ ...base, reason: coded(verdict) });
        this.handled.set(name, 'LEFT_PENDING');
        if (written) {
          this.csrs.announce(this.clusterId, name, `left-pending`);
          this.counters.leftPending += 1;
          this.log.info({ csr: name, reason: verdict.reason }, 'CSR left pending for an operator');
        }
      }
    } catch (error) {
      const delayMs = this.retryLater(name);
      this.log.warn({ err: error, csr: name, retryInMs: delayMs }, 'could not decide a CSR; trying it again after a pause');
    }
  }

  /** Schedules another pass after the backoff for this key's failures in a row; returns the delay. */
  private retryLater(key: string): number {
    const attempt = this.failures.get(key) ?? 0;
    this.failures.set(key, attempt + 1);
    this.counters.retries += 1;
    const delayMs = backoffDelayMs(this.options.retryBackoff ?? DECISION_RETRY_BACKOFF, attempt);
    const at = Date.now() + delayMs;
    if (this.retryTimer && this.retryAt <= at) {
      return delayMs;
    }
    this.cancelRetry();
    this.retryAt = at;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.retryAt = Number.POSITIVE_INFINITY;
      this.poke();
    }, delayMs);
    this.retryTimer.unref();
    return delayMs;
  }

  private cancelRetry(): void {
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    this.retryAt = Number.POSITIVE_INFINITY;
  }

  /** Trips (or releases) the max-pending guard for this pass, saying so once each way. */
  private checkPendingGuard(pending: number): PendingGuard | null {
    const max = this.options.maxPending ?? DEFAULT_MAX_PENDING_CSRS;
    const guard = pending > max ? { pending, max } : null;
    if (guard && !this.pausedBy) {
      this.log.warn(guard, 'more CSRs pending than CSR_APPROVER_MAX_PENDING: approving none until fewer are pending');
    } else if (!guard && this.pausedBy) {
      this.log.info({ pending, max }, 'pending CSRs back under CSR_APPROVER_MAX_PENDING: approving again');
    }
    this.pausedBy = guard;
    return guard;
  }

  private async audit(action: 'approveCsr' | 'denyCsr', name: string, verdict: CsrVerdict, extra: Record<string, unknown> = {}): Promise<void> {
    await this.options.audit?.record({
      actor: AUTO_APPROVER_ACTOR,
      action,
      targetType: 'Csr',
      targetId: name,
      result: 'SUCCESS',
      detail: { clusterId: this.clusterId, node: verdict.node, reason: verdict.reason, reasonCode: verdict.reasonCode, reasonParams: verdict.reasonParams, ...extra },
      requestId: null,
    });
  }

  /** An impostor's CSR was denied: the audit log, the node's install run and the metric hear of it. */
  private async raiseImpostor(snapshot: CsrSnapshot, name: string, verdict: CsrVerdict, requester: string): Promise<void> {
    await this.audit('denyCsr', name, verdict, { impostor: true, requester });
    const node = snapshot.inventory.find((entry) => entry.hostname === verdict.node);
    if (node?.runId) {
      const denied = message('notice.impostorDenied', { csr: name, reason: { code: verdict.reasonCode, params: verdict.reasonParams } });
      await this.options.notices?.raise({
        nodeId: node.id,
        runId: node.runId,
        kind: 'CSR_IMPOSTOR',
        subject: requester,
        message: denied.message,
        // The notice's text by its code, so clients word it in their language.
        detail: { csr: name, requester, messageCoded: bare(denied) },
      });
    }
    this.options.onImpostorDenied?.({ clusterId: this.clusterId, csr: name, node: verdict.node, requester });
  }
}

/**
 * The verdict as this cluster's switches let it act: a renewal's with renewals off becomes
 * "left pending" (and is recorded so, the operator sees why); a join verdict with join
 * auto-approve off is not this approver's at all (null).
 */
function switchedOff(verdict: CsrVerdict, cluster: Pick<ClusterEntity, 'csrAutoApprove' | 'autoApproveRenewals'>): CsrVerdict | null {
  if (autoApproves(cluster, verdict.path)) {
    return verdict;
  }
  if (verdict.path === 'JOIN') {
    return null;
  }
  const text = message('csr.decision.renewalsOff', { reason: verdict.decision === 'APPROVE' ? bare(message('csr.decision.renewalWouldApprove')) : verdictReason(verdict) });
  return { ...verdict, decision: 'LEAVE_PENDING', reason: text.message, reasonCode: text.code, reasonParams: text.params };
}

/** The verdict's reason as a message to nest. */
function verdictReason(verdict: CsrVerdict): Message {
  return { code: verdict.reasonCode, params: verdict.reasonParams };
}

/** The verdict's reason as the decision records it: its English text with its code. */
function coded(verdict: CsrVerdict): CodedText {
  return { message: verdict.reason, code: verdict.reasonCode, params: verdict.reasonParams };
}

/** A pass that failed before it decided anything (reading the cluster, say). */
const WHOLE_PASS = '';

const HELD_BY_GUARD = 'csr.decision.tooManyPending';

/** An approval held back by the max-pending guard becomes "left pending", with the guard's numbers as the reason. */
function heldByGuard(verdict: CsrVerdict, guard: PendingGuard): CsrVerdict {
  if (verdict.decision !== 'APPROVE') {
    return verdict;
  }
  const text = message(HELD_BY_GUARD, { pending: guard.pending, max: guard.max });
  return { ...verdict, decision: 'LEAVE_PENDING', reason: text.message, reasonCode: text.code, reasonParams: text.params };
}

function rank(verdict: CsrVerdict): number {
  return verdict.decision === 'APPROVE' ? 0 : verdict.decision === 'DENY_SUPERSEDED' || verdict.decision === 'DENY_IMPOSTOR' ? 1 : 2;
}
