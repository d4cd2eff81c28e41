import type { Logger } from 'pino';
import type { JobRegistry, NodeBatchStore, NodeEntity } from '@ccos/api/data-access-db';
import { type BatchProgressPayload, type EventBus, type InstallProgressPayload, TOPICS, followNodeChanges } from '@ccos/api/util-graphql';
import { type BatchPhase, nextBatchStep, verdictAllowsInstall } from '@ccos/shared/domain';
import type { InstallService } from './install.service';

/** A pass over every open batch, in case a node change was missed (a NOTIFY lost while reconnecting). */
const SAFETY_SWEEP_MS = 15_000;

/** The job that makes one pass over a batch (payload: `batchId`). */
export const BATCH_PASS_TASK = 'batch.pass';
const BATCH_PASS_ATTEMPTS = 3;

/**
 * Runs batch installs: at most `concurrency` installs of a batch at once, hosts started in
 * their batch order as they become ready, each host on its own (a failure only moves that
 * host to FAILED). A pass is a `batch.pass` job on the batch's own queue (one pass at a time,
 * on any process; asked for during a pass, one more runs after it), queued on every change of a
 * batch's node, by the requests that change a batch and by a sweep; its state is the phase column
 * of each node, so after a restart it goes on where it was. The API processes (`start`) follow the
 * batches' nodes and announce the batches' progress.
 */
export class BatchInstaller {
  private readonly watched = new Map<string, AsyncIterator<unknown>>();
  private readonly steps = new Map<string, { readonly batchId: string; readonly iterator: AsyncIterator<unknown> }>();
  private sweep: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly batches: NodeBatchStore,
    private readonly installs: InstallService,
    private readonly bus: EventBus,
    private readonly jobs: JobRegistry,
    private readonly logger: Logger,
  ) {
    jobs.register(BATCH_PASS_TASK, async (payload) => this.pass(String(payload['batchId'])));
  }

  /** Follows the open batches (those a restart interrupted too) and sweeps them now and then. Their number. */
  async start(): Promise<number> {
    const open = await this.sweepOpen();
    this.sweep = setInterval(() => {
      void this.sweepOpen().catch((error: unknown) => this.logger.warn({ err: error }, 'could not list open batches'));
    }, SAFETY_SWEEP_MS);
    this.sweep.unref();
    return open.length;
  }

  /** Queues a pass over every open batch, and follows each one's nodes. */
  private async sweepOpen(): Promise<string[]> {
    const ids = await this.openBatchIds();
    for (const id of ids) {
      await this.kick(id);
    }
    return ids;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweep) {
      clearInterval(this.sweep);
    }
    await Promise.all([...this.watched.values(), ...[...this.steps.values()].map((followed) => followed.iterator)].map((iterator) => iterator.return?.()));
    this.watched.clear();
    this.steps.clear();
  }

  /** Queues a pass over the batch (on its queue: after the one running, if any), and follows its nodes here. */
  async kick(batchId: string): Promise<void> {
    await this.jobs.enqueue(BATCH_PASS_TASK, { batchId }, { key: `${BATCH_PASS_TASK}:${batchId}`, queue: `batch:${batchId}`, maxAttempts: BATCH_PASS_ATTEMPTS });
    if (this.stopped) {
      return;
    }
    const batch = await this.batches.find(batchId);
    if (batch) {
      this.watch(batch.clusterId);
      await this.followActive(batchId);
    }
  }

  /** One pass: moves the batch's hosts on by their node's status, and starts installs as its concurrency allows. */
  async pass(batchId: string): Promise<void> {
    const batch = await this.batches.find(batchId);
    if (!batch) {
      return;
    }
    const hosts = await this.batches.hostsOf(batchId);
    let active = hosts.filter((host) => host.batchPhase === 'ACTIVE').length;
    const waiting: Array<{ host: NodeEntity; via: 'install' | 'retry' }> = [];
    const actor = batch.installRequestedBy ?? batch.createdBy;
    for (const host of hosts) {
      const phase: BatchPhase = host.batchPhase ?? 'ADDED';
      const step = nextBatchStep(phase, host.status, !verdictAllowsInstall(host.hostVerdict));
      if (step.kind === 'MOVE') {
        if (await this.setPhase(host, phase, step.to)) {
          active += step.to === 'ACTIVE' ? 1 : phase === 'ACTIVE' ? -1 : 0;
        }
      } else if (step.kind === 'RESUME') {
        await this.begin(host, step.via, actor);
      } else if (step.kind === 'START') {
        waiting.push({ host, via: step.via });
      }
    }
    for (const { host, via } of waiting) {
      if (active >= batch.concurrency) {
        break;
      }
      if (!(await this.setPhase(host, 'QUEUED', 'ACTIVE'))) {
        continue;
      }
      active += 1;
      if (!(await this.begin(host, via, actor))) {
        // Its node changed under us (e.g. an operator acted on it): let the next pass decide again.
        await this.setPhase(host, 'ACTIVE', 'QUEUED');
        active -= 1;
      }
    }
    this.publish(batchId);
  }

  /** Step milestones of the batch's installing hosts feed its progress too (announced by the API process that follows them). */
  private async followActive(batchId: string): Promise<void> {
    const ids = new Set(await this.batches.hostIdsOf(batchId, 'ACTIVE'));
    for (const [nodeId, followed] of this.steps) {
      if (followed.batchId === batchId && !ids.has(nodeId)) {
        this.steps.delete(nodeId);
        void followed.iterator.return?.();
      }
    }
    for (const nodeId of ids) {
      if (this.steps.has(nodeId) || this.stopped) {
        continue;
      }
      const iterator = (this.bus.subscribe(TOPICS.INSTALL_PROGRESS, nodeId) as AsyncIterable<InstallProgressPayload>)[Symbol.asyncIterator]();
      this.steps.set(nodeId, { batchId, iterator });
      void (async () => {
        for (;;) {
          const next = await iterator.next();
          if (next.done) {
            return;
          }
          if (next.value.status !== 'PROGRESS') {
            this.publish(batchId);
          }
        }
      })().catch(() => this.steps.delete(nodeId));
    }
  }

  /** Starts the host's install (or resumes it at its failed step); false when its node was not in a state for it. */
  private async begin(host: NodeEntity, via: 'install' | 'retry', actor: string): Promise<boolean> {
    try {
      await (via === 'install' ? this.installs.install(host.id, actor) : this.installs.retry(host.id, actor));
      this.logger.info({ nodeId: host.id, batchId: host.batchId, via }, 'batch started an install');
      return true;
    } catch (error) {
      this.logger.warn({ err: error, nodeId: host.id, batchId: host.batchId }, 'batch could not start an install');
      return false;
    }
  }

  /** Compare-and-set of a host's phase, so two passes (or replicas) never both move it. */
  private async setPhase(host: NodeEntity, from: BatchPhase, to: BatchPhase): Promise<boolean> {
    return this.batches.setPhase(host.id, from, to);
  }

  private publish(batchId: string): void {
    const payload: BatchProgressPayload = { batchId, at: new Date().toISOString() };
    this.bus.publish(TOPICS.BATCH_PROGRESS, batchId, payload);
  }

  private openBatchIds(): Promise<string[]> {
    return this.batches.openIds();
  }

  /** Follows the cluster's node changes: a change of a batch host runs a pass of its batch. */
  private watch(clusterId: string): void {
    if (this.watched.has(clusterId) || this.stopped) {
      return;
    }
    const iterator = followNodeChanges(
      this.bus,
      clusterId,
      async (change) => {
        const node = await this.batches.placeOf(change.nodeId).catch(() => null);
        // The change itself reaches the batch's subscribers from the node store's publisher.
        if (node?.batchId && node.batchPhase && node.batchPhase !== 'ADDED') {
          await this.kick(node.batchId).catch((error: unknown) => this.logger.warn({ err: error, batchId: node.batchId }, 'could not queue a pass over a batch'));
        }
      },
      {
        stopped: () => this.stopped,
        failed: (error) => {
          this.watched.delete(clusterId);
          this.logger.warn({ err: error, clusterId }, 'stopped following node changes for batches');
        },
      },
    );
    this.watched.set(clusterId, iterator);
  }
}
