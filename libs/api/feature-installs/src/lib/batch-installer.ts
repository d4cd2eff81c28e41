import type { Logger } from 'pino';
import type { NodeBatchStore, NodeEntity } from '@ccos/api/data-access-db';
import { type BatchProgressPayload, type EventBus, type InstallProgressPayload, TOPICS, followNodeChanges } from '@ccos/api/util-graphql';
import { type BatchPhase, nextBatchStep, verdictAllowsInstall } from '@ccos/shared/domain';
import type { InstallService } from './install.service';

/** A pass over every open batch, in case a node change was missed (a NOTIFY lost while reconnecting). */
const SAFETY_SWEEP_MS = 15_000;

/**
 * Runs batch installs: at most `concurrency` installs of a batch at once, hosts started in
 * their batch order as they become ready, each host on its own (a failure only moves that
 * host to FAILED). Driven by node changes on the event bus; its state is the phase column of
 * each node, so after a restart it goes on where it was.
 */
export class BatchInstaller {
  /** One pass at a time per batch; a request during a pass runs one more pass after it. */
  private readonly passes = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly watched = new Map<string, AsyncIterator<unknown>>();
  private readonly steps = new Map<string, { readonly batchId: string; readonly iterator: AsyncIterator<unknown> }>();
  private sweep: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly batches: NodeBatchStore,
    private readonly installs: InstallService,
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  /** Picks up the batches that were installing when the service stopped. */
  async start(): Promise<number> {
    const open = await this.openBatchIds();
    await Promise.all(open.map((id) => this.kick(id)));
    this.sweep = setInterval(() => {
      void this.openBatchIds().then(
        (ids) => ids.forEach((id) => void this.kick(id)),
        (error: unknown) => this.logger.warn({ err: error }, 'could not list open batches'),
      );
    }, SAFETY_SWEEP_MS);
    this.sweep.unref();
    return open.length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweep) {
      clearInterval(this.sweep);
    }
    await Promise.all([...this.watched.values(), ...[...this.steps.values()].map((followed) => followed.iterator)].map((iterator) => iterator.return?.()));
    this.watched.clear();
    this.steps.clear();
    await Promise.all([...this.passes.values()]);
  }

  /** Runs a pass over the batch now (or right after the one running), and follows its cluster's node changes. */
  async kick(batchId: string): Promise<void> {
    if (this.stopped) {
      return;
    }
    const running = this.passes.get(batchId);
    if (running) {
      this.again.add(batchId);
      return running;
    }
    const pass = this.pass(batchId)
      .catch((error: unknown) => this.logger.error({ err: error, batchId }, 'batch pass failed'))
      .finally(() => {
        this.passes.delete(batchId);
        if (this.again.delete(batchId)) {
          void this.kick(batchId);
        }
      });
    this.passes.set(batchId, pass);
    return pass;
  }

  private async pass(batchId: string): Promise<void> {
    const batch = await this.batches.find(batchId);
    if (!batch) {
      return;
    }
    this.watch(batch.clusterId);
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
    await this.followActive(batchId);
    this.publish(batchId);
  }

  /** Step milestones of the batch's installing hosts feed its progress too. */
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
          void this.kick(node.batchId);
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
