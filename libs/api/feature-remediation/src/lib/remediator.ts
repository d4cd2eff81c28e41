import type { Logger } from 'pino';
import { type ClusterStore, type JobRegistry, type NodeEntity, type NodeStore, PeriodicQueueing, type RolloutStore, hostQueue } from '@ccos/api/data-access-db';
import { sshFailureOutcome, sshTargetOf } from '@ccos/api/data-access-hosts';
import type { SshPool } from '@ccos/api/data-access-ssh';
import type { AuditSink } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import {
  DEFAULT_REMEDIATION_POLICY,
  type NodeRemediation,
  type RemediationMember,
  type RemediationRung,
  type RemediationStep,
  nodeHealth,
  planRemediation,
} from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import type { Clock } from '@ccos/shared/util-timing';

/** The durable job that decides a cluster's remediation (payload: its id); one at a time per cluster. */
export const EVALUATE_TASK = 'cluster.remediate';
/** The durable job that runs one rung on a member's host (payload: its id and the rung). */
export const RUNG_TASK = 'node.remediate';

export const REMEDIATION_ACTOR = 'remediation';
const MEMBER_STATUSES = new Set<NodeEntity['status']>(['JOINED', 'DRAIN_FAILED']);
const RUNG_TIMEOUT_MS = 60_000;
/** What each rung on the host runs over SSH (REPLACE runs through the node groups). */
const RUNG_COMMANDS: Readonly<Record<Exclude<RemediationRung, 'REPLACE'>, readonly string[]>> = {
  RESTART_KUBELET: ['systemctl', 'restart', 'kubelet'],
  REBOOT: ['systemctl', 'reboot'],
};

/** What remediation needs of the node feature: a fresh check of a host once a rung ran. */
export interface HostHealthProbe {
  queue(node: Pick<NodeEntity, 'id' | 'clusterId' | 'hostname' | 'ip'>): Promise<void>;
}

/** The REPLACE rung: feature-autoscaling's node groups put a spare in a member's place. */
export interface MemberReplacer {
  /** The cluster's members whose node group has a spare. */
  replaceableMembers(clusterId: string): Promise<ReadonlySet<string>>;
  /** Starts the replacement; `skipHostSide` when the removal must go on without the host. Says what it did, or why it did nothing. */
  replaceMember(nodeId: string, actor: string, removal: { readonly skipHostSide?: string }): Promise<{ readonly started: boolean; readonly text: CodedText }>;
}

/** Counts for the metrics. */
export interface RemediationObserver {
  action(clusterId: string, action: string): void;
}

export interface RemediatorOptions {
  readonly clusters: ClusterStore;
  readonly nodes: NodeStore;
  readonly jobs: JobRegistry;
  readonly ssh: SshPool;
  readonly secrets: SecretBox;
  readonly audit: AuditSink;
  readonly probe: HostHealthProbe;
  /** Which members a rollout has out of service on purpose (remediation leaves them to it). */
  readonly rollouts: Pick<RolloutStore, 'nodesInMaintenance'>;
  /** Node groups, for the REPLACE rung; without it the ladder ends after the reboot. */
  readonly replacer?: MemberReplacer;
  readonly clock: Clock;
  /** How often each cluster with a policy on is evaluated. */
  readonly intervalMs: number;
  readonly logger: Logger;
  readonly observer?: RemediationObserver;
}

/**
 * Remediation of unhealthy members, per the cluster's policy: every interval a job per cluster
 * (one at a time per cluster, on any replica) plans with the domain's `planRemediation` and acts:
 * a rung starts as a job on the member's host queue (restart the kubelet, then reboot), a member
 * healthy again is recovered, and the cap holds it all when too many members are unhealthy. Every
 * action is audited as the `remediation` actor, counted, and published with the node.
 */
export class Remediator {
  private readonly periodic: PeriodicQueueing;
  private readonly log: Logger;

  constructor(private readonly options: RemediatorOptions) {
    this.log = options.logger.child({ component: 'remediation' });
    options.jobs.register(EVALUATE_TASK, async (payload) => this.evaluate(String(payload['clusterId'])));
    options.jobs.register(RUNG_TASK, async (payload, { lost }) => this.runRung(String(payload['nodeId']), payload['rung'] as RemediationRung, lost));
    this.periodic = new PeriodicQueueing(options.intervalMs, () => this.queueAll(), (error) => this.log.warn({ err: error }, 'could not queue the remediation of the clusters'));
  }

  start(): void {
    this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** Queues an evaluation of every cluster whose policy is on. */
  async queueAll(): Promise<void> {
    for (const cluster of await this.options.clusters.withRemediation()) {
      await this.options.jobs.enqueue(EVALUATE_TASK, { clusterId: cluster.id }, { key: `${EVALUATE_TASK}:${cluster.id}`, queue: `cluster:${cluster.id}`, maxAttempts: 1 });
    }
  }

  /** Plans the cluster's remediation now and acts on it. */
  async evaluate(clusterId: string): Promise<void> {
    const cluster = await this.options.clusters.find(clusterId);
    if (!cluster) {
      return;
    }
    const policy = cluster.remediationPolicy ?? DEFAULT_REMEDIATION_POLICY;
    const now = this.options.clock.now();
    const members = (await this.options.nodes.activeOf(clusterId)).filter((node) => MEMBER_STATUSES.has(node.status));
    const replaceable = (await this.options.replacer?.replaceableMembers(clusterId)) ?? new Set<string>();
    const inMaintenance = await this.options.rollouts.nodesInMaintenance(clusterId);
    const judged: RemediationMember[] = members.map((node) => ({
      id: node.id,
      health: nodeHealth(node),
      remediation: node.remediation,
      replaceable: replaceable.has(node.id),
      inMaintenance: inMaintenance.has(node.id),
    }));
    const plan = planRemediation(policy, judged, new Date(now));
    const byId = new Map(members.map((node) => [node.id, node]));
    for (const step of plan.steps) {
      const node = byId.get(step.nodeId);
      if (node) {
        await this.act(node, step, policy.rungTimeoutSeconds, now);
      }
    }
    await this.recordHold(cluster.id, cluster.remediationHeld, plan.held, now);
  }

  private async act(node: NodeEntity, step: RemediationStep, rungTimeoutSeconds: number, now: number): Promise<void> {
    if (step.kind === 'RECOVERED') {
      await this.options.nodes.update(node.id, { remediation: null });
      await this.audit(node, 'recovered', message('remediation.recovered', { hostname: node.hostname, rungs: (node.remediation?.rungs ?? []).join(', ') }));
      return;
    }
    if (step.kind === 'EXHAUSTED') {
      if (node.remediation) {
        await this.options.nodes.update(node.id, { remediation: { ...node.remediation, exhausted: true } });
      }
      await this.audit(node, 'exhausted', message('remediation.exhausted', { hostname: node.hostname }));
      return;
    }
    const remediation: NodeRemediation = {
      rung: step.rung,
      startedAt: node.remediation?.startedAt ?? new Date(now).toISOString(),
      deadline: new Date(now + rungTimeoutSeconds * 1000).toISOString(),
      rungs: [...(node.remediation?.rungs ?? []), step.rung],
      exhausted: false,
    };
    await this.options.nodes.update(node.id, { remediation });
    await this.options.jobs.enqueue(RUNG_TASK, { nodeId: node.id, clusterId: node.clusterId, hostname: node.hostname, rung: step.rung }, {
      key: `${RUNG_TASK}:${node.id}`,
      queue: hostQueue(node.ip ?? node.hostname),
      maxAttempts: 1,
    });
  }

  /**
   * Runs the rung on the member's host; an unreachable host is recorded, and the ladder's deadline
   * moves it on. `signal`: aborted when the job is no longer this process's; nothing more runs.
   */
  private async runRung(nodeId: string, rung: RemediationRung, signal?: AbortSignal): Promise<void> {
    const node = await this.options.nodes.find(nodeId);
    if (rung === 'REPLACE') {
      if (node?.remediation?.rung === rung && MEMBER_STATUSES.has(node.status)) {
        await this.replace(node);
      }
      return;
    }
    if (!node?.sshCredentialsSealed || node.remediation?.rung !== rung) {
      return;
    }
    const command = RUNG_COMMANDS[rung];
    let outcome: { ok: boolean; text: CodedText };
    let sent = false;
    try {
      const result = await this.options.ssh.run(
        sshTargetOf(node, this.options.secrets),
        (session) => {
          signal?.throwIfAborted();
          sent = true;
          return session.exec(command, { timeoutMs: RUNG_TIMEOUT_MS, signal });
        },
        { signal },
      );
      outcome = result.exitCode === 0 || rung === 'REBOOT'
        ? { ok: true, text: message(`remediation.rung.${rung}`, { hostname: node.hostname }) }
        : { ok: false, text: message('remediation.rungFailed', { hostname: node.hostname, command: command.join(' '), output: (result.stderr || result.stdout).trim().slice(-300) }) };
    } catch (error) {
      if (signal?.aborted) {
        throw signal.reason;
      }
      const failure = sshFailureOutcome(error);
      // A reboot ends the session under the command: that is the rung working (a host that refused the login never got it).
      if (rung === 'REBOOT' && sent && failure?.event === 'SSH_UNREACHABLE') {
        outcome = { ok: true, text: message('remediation.rung.REBOOT', { hostname: node.hostname }) };
      } else if (failure) {
        outcome = { ok: false, text: message('remediation.rungFailed', { hostname: node.hostname, command: command.join(' '), output: failure.reason.message }) };
      } else {
        throw error;
      }
    }
    await this.audit(node, rung.toLowerCase(), outcome.text, outcome.ok);
    await this.options.probe.queue(node);
  }

  /** The last rung: a spare of the member's node group in its place; a host that does not answer is left as it is, reinstall required. */
  private async replace(node: NodeEntity): Promise<void> {
    const replacer = this.options.replacer;
    if (!replacer) {
      return;
    }
    const hostGone = node.hostHealth?.reachable === false;
    const outcome = await replacer.replaceMember(node.id, REMEDIATION_ACTOR, hostGone ? { skipHostSide: message('remediation.hostGone').message } : {});
    await this.audit(node, 'replace', outcome.started ? outcome.text : message('remediation.replaceNotStarted', { hostname: node.hostname, reason: outcome.text }), outcome.started);
    if (!outcome.started && node.remediation) {
      await this.options.nodes.update(node.id, { remediation: { ...node.remediation, exhausted: true } });
    }
  }

  private async recordHold(clusterId: string, before: { readonly unhealthy: number; readonly members: number; readonly cap: number; readonly since: string } | null, held: { unhealthy: number; members: number; cap: number } | null, now: number): Promise<void> {
    if (held) {
      const changed = !before || before.unhealthy !== held.unhealthy || before.members !== held.members || before.cap !== held.cap;
      if (changed) {
        await this.options.clusters.recordRemediationHeld(clusterId, { ...held, since: before?.since ?? new Date(now).toISOString() });
      }
      if (!before) {
        await this.auditCluster(clusterId, 'held', message('remediation.held', held));
      }
    } else if (before) {
      await this.options.clusters.recordRemediationHeld(clusterId, null);
      await this.auditCluster(clusterId, 'released', message('remediation.released', { unhealthy: before.unhealthy, cap: before.cap }));
    }
  }

  private async audit(node: NodeEntity, action: string, text: CodedText, ok = true): Promise<void> {
    this.log.info({ nodeId: node.id, hostname: node.hostname, action }, text.message);
    this.options.observer?.action(node.clusterId, action);
    await this.options.audit.record({
      actor: REMEDIATION_ACTOR,
      action: `remediation.${action}`,
      targetType: 'node',
      targetId: node.id,
      result: ok ? 'SUCCESS' : 'FAILURE',
      detail: { hostname: node.hostname, reason: text.message, reasonCode: text.code, reasonParams: text.params },
      requestId: null,
    });
  }

  private async auditCluster(clusterId: string, action: string, text: CodedText): Promise<void> {
    this.log.warn({ clusterId, action }, text.message);
    this.options.observer?.action(clusterId, action);
    await this.options.audit.record({
      actor: REMEDIATION_ACTOR,
      action: `remediation.${action}`,
      targetType: 'cluster',
      targetId: clusterId,
      result: 'SUCCESS',
      detail: { reason: text.message, reasonCode: text.code, reasonParams: text.params },
      requestId: null,
    });
  }
}
