import type { Logger } from 'pino';
import { type JobRegistry, type NodeEntity, type NodeStore, PeriodicQueueing, hostQueue } from '@ccos/api/data-access-db';
import { sshFailureOutcome, sshTargetOf } from '@ccos/api/data-access-hosts';
import type { SshPool } from '@ccos/api/data-access-ssh';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type HealthState, type HostHealthCheck, nodeHealth } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';

/** The durable job that checks one member's host (payload: its id). */
export const HEALTH_CHECK_TASK = 'node.check-health';

/** Members whose hosts are checked: those installed here (the service holds their SSH credentials). */
const CHECKED_STATUSES = ['JOINED', 'DRAIN_FAILED'] as const;
/** Members whose health is counted: also those being removed. */
const MEMBER_STATUSES = ['JOINED', 'DRAIN_FAILED', 'REMOVING'] as const;
const CHECK_TIMEOUT_MS = 15_000;

/**
 * The host side of a member node's health: every `intervalMs`, one job per member on its host's
 * queue runs `systemctl is-active kubelet` over SSH (one exec, host key pinned) and records
 * whether the host answered and what the unit said. Every replica queues them; the job key keeps
 * one waiting check per node. A check that cannot reach the host is a finding, not a failure.
 */
export class NodeHealthChecks {
  private readonly periodic: PeriodicQueueing;

  constructor(
    private readonly nodes: NodeStore,
    private readonly secrets: SecretBox,
    private readonly pool: SshPool,
    private readonly jobs: JobRegistry,
    intervalMs: number,
    private readonly logger: Logger,
  ) {
    jobs.register(HEALTH_CHECK_TASK, async (payload) => this.check(String(payload['nodeId'])));
    this.periodic = new PeriodicQueueing(intervalMs, () => this.queueAll(), (error) => logger.warn({ err: error, component: 'health-checks' }, 'could not queue the hosts\' health checks'));
  }

  start(): void {
    this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** Queues a check of every member's host; their number. */
  async queueAll(): Promise<number> {
    const members = await this.nodes.withHostAccess(CHECKED_STATUSES);
    for (const node of members) {
      await this.queue(node);
    }
    return members.length;
  }

  /** Member nodes by cluster and health (the metrics; every replica reads the same). */
  async countByHealth(): Promise<Array<{ clusterId: string; state: HealthState; count: number }>> {
    const counts = new Map<string, { clusterId: string; state: HealthState; count: number }>();
    for (const node of await this.nodes.healthInputsOf(MEMBER_STATUSES)) {
      const health = nodeHealth(node);
      if (health) {
        const key = `${node.clusterId}/${health.state}`;
        const entry = counts.get(key) ?? { clusterId: node.clusterId, state: health.state, count: 0 };
        entry.count += 1;
        counts.set(key, entry);
      }
    }
    return [...counts.values()];
  }

  /** Queues a check of the node's host now. */
  queue(node: Pick<NodeEntity, 'id' | 'clusterId' | 'hostname' | 'ip'>): Promise<void> {
    return this.jobs.enqueue(HEALTH_CHECK_TASK, { nodeId: node.id, clusterId: node.clusterId, hostname: node.hostname }, {
      key: `${HEALTH_CHECK_TASK}:${node.id}`,
      queue: hostQueue(node.ip ?? node.hostname),
      maxAttempts: 1,
    });
  }

  private async check(nodeId: string): Promise<void> {
    const node = await this.nodes.find(nodeId);
    if (!node || !(CHECKED_STATUSES as readonly string[]).includes(node.status) || !node.sshCredentialsSealed) {
      return;
    }
    const checkedAt = new Date().toISOString();
    let result: HostHealthCheck;
    try {
      const state = await this.pool.run(sshTargetOf(node, this.secrets), async (session) => {
        const answer = await session.exec(['systemctl', 'is-active', 'kubelet'], { timeoutMs: CHECK_TIMEOUT_MS });
        return answer.stdout.trim().split('\n')[0] || `exit ${answer.exitCode}`;
      });
      result = { checkedAt, reachable: true, kubeletActive: state === 'active', reason: message('health.kubeletState', { state }) };
    } catch (error) {
      const failure = sshFailureOutcome(error);
      if (!failure) {
        throw error;
      }
      result = { checkedAt, reachable: false, kubeletActive: null, reason: failure.reason };
    }
    const before = node.hostHealth;
    await this.nodes.update(node.id, { hostHealth: result });
    if (before && (before.reachable !== result.reachable || before.kubeletActive !== result.kubeletActive)) {
      this.logger.info({ nodeId: node.id, host: node.ip, reachable: result.reachable, kubeletActive: result.kubeletActive }, 'the health of a node\'s host changed');
    }
  }
}
