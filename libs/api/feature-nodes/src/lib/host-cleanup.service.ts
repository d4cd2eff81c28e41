import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type JobRegistry, type NodeEntity, type NodeStore, hostQueue, reasonFields } from '@ccos/api/data-access-db';
import { sshTargetOf } from '@ccos/api/data-access-hosts';
import type { SshPool } from '@ccos/api/data-access-ssh';
import { PreconditionError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type Leftover, cleanupPaths, decideHostVerdict, statusText } from '@ccos/shared/domain';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import { cleanHost, scanHost } from './host-scan';

/**
 * Ends the cluster-side leftovers of a host: deletes a Node that is not Ready, denies the CSRs left
 * pending under its name (as a removal does: the service's role may decide CSRs, not delete them),
 * through the one CSR decision path, so the denial is recorded with the operator who asked.
 */
export interface ClusterLeftoverCleaner {
  deleteNode(clusterId: string, name: string): Promise<void>;
  denyCsr(clusterId: string, name: string, actor: string): Promise<void>;
}

/**
 * The cluster object a leftover names. Verdicts stored before leftovers carried `name` have only
 * the shown item (`Node/<name> (Ready)`, `CertificateSigningRequest/<name>`) to go by.
 */
function clusterObjectName(leftover: Leftover): string {
  return leftover.name ?? leftover.item.replace(/^(Node|CertificateSigningRequest)\//, '').replace(/ \(.*\)$/, '');
}

/** The job that cleans a host (payload: `nodeId`, `actor`, `requestId`), on a worker. */
export const CLEAN_HOST_TASK = 'node.clean-host';

export interface HostCleanupTimings {
  /** How long a request waits for its cleanup to end on a worker before answering that it still runs. Default 120 s. */
  readonly waitMs?: number;
  /** How often the request reads the node meanwhile. Default 250 ms. */
  readonly pollMs?: number;
}

/**
 * Cleans what an earlier membership left on a host (and in the cluster), on an operator's
 * confirmation only, and exactly what the stored verdict listed. The request checks and queues a
 * `node.clean-host` job on the host's queue; a worker cleans, scans the host again and records the
 * outcome on the verdict (`cleanedAt`, or `lastCleanup.problem`), which the request waits for.
 */
export class HostCleanupService {
  private readonly waitMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly nodes: NodeStore,
    private readonly secrets: SecretBox,
    private readonly pool: SshPool,
    private readonly cluster: ClusterLeftoverCleaner | null,
    private readonly jobs: JobRegistry,
    private readonly logger: Logger,
    timings: HostCleanupTimings = {},
  ) {
    this.waitMs = timings.waitMs ?? 120_000;
    this.pollMs = timings.pollMs ?? 250;
    jobs.register(CLEAN_HOST_TASK, (payload) => this.cleanJob(String(payload['nodeId']), String(payload['actor']), String(payload['requestId'])));
  }

  /** Cleans the node's host on a worker and answers with the node once it is clean; refused (FAILED_PRECONDITION) as the cleanup cannot or did not clean. */
  async clean(nodeId: string, actor: string): Promise<NodeEntity> {
    const node = await this.nodes.get(nodeId);
    const refused = this.refusalOf(node);
    if (refused) {
      throw new PreconditionError(refused.text, refused.extensions);
    }
    const requestId = randomUUID();
    await this.jobs.enqueue(CLEAN_HOST_TASK, { nodeId, actor, requestId }, { key: `${CLEAN_HOST_TASK}:${nodeId}`, queue: hostQueue(node.ip ?? node.hostname), maxAttempts: 1 });
    const until = Date.now() + this.waitMs;
    while (Date.now() < until) {
      const now = await this.nodes.get(nodeId);
      const outcome = now.hostVerdict?.lastCleanup;
      if (outcome?.requestId === requestId) {
        if (outcome.problem) {
          throw new PreconditionError(message(outcome.problem.code, outcome.problem.params));
        }
        return now;
      }
      await sleep(this.pollMs);
    }
    throw new PreconditionError(message('cleanup.stillRunning', { hostname: node.hostname, seconds: Math.round(this.waitMs / 1000) }));
  }

  /** Why the node's host cannot be cleaned now, or null. */
  private refusalOf(node: NodeEntity): { readonly text: CodedText; readonly extensions?: Record<string, unknown> } | null {
    const verdict = node.hostVerdict;
    if (!verdict || verdict.verdict !== 'CLEANABLE' || verdict.cleanedAt) {
      return {
        text: verdict?.verdict === 'REINSTALL_REQUIRED'
          ? message('cleanup.reinstallRequired', { hostname: node.hostname, reason: verdict.reasonCoded ?? verdict.reason })
          : message('cleanup.nothingToClean', { hostname: node.hostname, state: verdict ? (verdict.cleanedAt ? 'cleaned' : verdict.verdict) : 'unchecked' }),
      };
    }
    if (node.status !== 'READY_TO_INSTALL') {
      return { text: message('cleanup.needsReady', { hostname: node.hostname, status: statusText(node.status) }), extensions: { status: node.status } };
    }
    if (verdict.leftovers.some((leftover) => leftover.kind === 'CLUSTER_NODE' || leftover.kind === 'CLUSTER_CSRS') && !this.cluster) {
      return { text: message('cleanup.clusterUnreachable') };
    }
    return null;
  }

  /** The job: cleans what the verdict lists and records the outcome on the verdict (a failure is an outcome, not a job failure). */
  private async cleanJob(nodeId: string, actor: string, requestId: string): Promise<void> {
    const node = await this.nodes.find(nodeId);
    const verdict = node?.hostVerdict;
    if (!node || !verdict) {
      return;
    }
    const ended = (problem: CodedText | null) => ({ requestId, at: new Date().toISOString(), problem: problem ? bare(problem) : null });
    // Checked again: the node may have changed while the job waited on the host's queue.
    const refused = this.refusalOf(node);
    if (refused) {
      await this.nodes.update(node.id, { hostVerdict: { ...verdict, lastCleanup: ended(refused.text) } });
      return;
    }
    let remaining: readonly Leftover[];
    try {
      remaining = await this.pool.run(sshTargetOf(node, this.secrets), async (session) => {
        await cleanHost(session, cleanupPaths(verdict.leftovers));
        return (await scanHost(session)).leftovers;
      });
      for (const leftover of verdict.leftovers.filter((item) => item.kind === 'CLUSTER_NODE' || item.kind === 'CLUSTER_CSRS')) {
        const name = clusterObjectName(leftover);
        await (leftover.kind === 'CLUSTER_NODE' ? this.cluster?.deleteNode(node.clusterId, name) : this.cluster?.denyCsr(node.clusterId, name, actor));
      }
    } catch (error) {
      this.logger.warn({ err: error, nodeId, actor }, 'the cleanup of a host failed');
      await this.nodes.update(node.id, { hostVerdict: { ...verdict, lastCleanup: ended(message('cleanup.failed', { hostname: node.hostname, error: error instanceof Error ? error.message : String(error) })) } });
      return;
    }
    const left: Leftover[] = remaining.filter((leftover) => verdict.leftovers.some((listed) => listed.item === leftover.item) || leftover.kind === 'KUBELET_SERVICE');
    if (left.length > 0) {
      await this.nodes.update(node.id, { hostVerdict: { ...decideHostVerdict(remaining), lastCleanup: ended(message('cleanup.leftBehind', { hostname: node.hostname, items: left.map((leftover) => leftover.item).join(', ') })) } });
      return;
    }
    this.logger.info({ nodeId: node.id, actor, items: verdict.leftovers.length }, 'cleaned the leftovers of an earlier membership');
    const at = new Date().toISOString();
    await this.nodes.update(node.id, { hostVerdict: { ...verdict, cleanedAt: at, lastCleanup: ended(null) }, ...reasonFields(message('node.leftoversCleaned', { actor })) });
  }
}
