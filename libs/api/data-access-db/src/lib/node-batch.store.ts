import { type DataSource, In, type Repository } from 'typeorm';
import type { BatchPhase } from '@ccos/shared/domain';
import { NodeBatchEntity } from './entities/node-batch.entity';
import { NodeEntity } from './entities/node.entity';
import { isUuid, type NewNodeBatch } from './node.store';

/**
 * `node_batches` and the batch state of their hosts (`nodes.batch_id`, `batch_position`,
 * `batch_phase`). A host's phase moves by compare-and-set only, so two passes (or replicas) never
 * both move it. Phase changes are the batch's own state: the batch installer publishes its
 * progress, the node store's listener is not told.
 */
export class NodeBatchStore {
  private readonly batches: Repository<NodeBatchEntity>;
  private readonly nodes: Repository<NodeEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.batches = dataSource.getRepository(NodeBatchEntity);
    this.nodes = dataSource.getRepository(NodeEntity);
  }

  /** The batch, or null (also for an id that is no UUID). */
  find(id: string): Promise<NodeBatchEntity | null> {
    return isUuid(id) ? this.batches.findOneBy({ id }) : Promise.resolve(null);
  }

  /** The cluster's latest 50 batches, newest first. */
  latestOf(clusterId: string): Promise<NodeBatchEntity[]> {
    return this.batches.find({ where: { clusterId }, order: { createdAt: 'DESC' }, take: 50 });
  }

  /** Records who asked for the batch's install (and when), and at which concurrency it runs. */
  async update(id: string, fields: Partial<Pick<NodeBatchEntity, 'concurrency' | 'installRequestedBy' | 'installRequestedAt'>>): Promise<void> {
    await this.batches.update(id, fields);
  }

  /** A new batch of hosts already stored (in this order), in one transaction; they leave the batch they were in. */
  async createOf(batch: NewNodeBatch, nodeIds: readonly string[]): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.getRepository(NodeBatchEntity).insert(batch);
      for (const [index, nodeId] of nodeIds.entries()) {
        await manager.getRepository(NodeEntity).update({ id: nodeId, clusterId: batch.clusterId }, { batchId: batch.id, batchPosition: index + 1, batchPhase: 'ADDED' });
      }
    });
  }

  /** The batch's hosts in their batch order. */
  hostsOf(batchId: string): Promise<NodeEntity[]> {
    return this.nodes.find({ where: { batchId }, order: { batchPosition: 'ASC' } });
  }

  /** The batch's hosts in `phase`. */
  hostsIn(batchId: string, phase: BatchPhase): Promise<NodeEntity[]> {
    return this.nodes.find({ where: { batchId, batchPhase: phase } });
  }

  /** The ids of the batch's hosts (in `phase`, when given). */
  async hostIdsOf(batchId: string, phase?: BatchPhase): Promise<string[]> {
    const hosts = await this.nodes.find({ where: phase ? { batchId, batchPhase: phase } : { batchId }, select: { id: true } });
    return hosts.map((host) => host.id);
  }

  /** Where a node stands in its batch (no batch: both null); null when the node is gone. */
  placeOf(nodeId: string): Promise<Pick<NodeEntity, 'id' | 'batchId' | 'batchPhase'> | null> {
    return this.nodes.findOne({ where: { id: nodeId }, select: { id: true, batchId: true, batchPhase: true } });
  }

  /** Compare-and-set of a host's phase: false when it was no longer in `from`. */
  async setPhase(nodeId: string, from: BatchPhase, to: BatchPhase): Promise<boolean> {
    const result = await this.nodes.createQueryBuilder().update().set({ batchPhase: to }).where('id = :id AND batch_phase = :from', { id: nodeId, from }).execute();
    return result.affected === 1;
  }

  /** Moves every host of the batch in one of the `from` phases to `to`; returns how many moved. */
  async movePhase(batchId: string, from: readonly BatchPhase[], to: BatchPhase): Promise<number> {
    const result = await this.nodes.update({ batchId, batchPhase: In([...from]) }, { batchPhase: to });
    return result.affected ?? 0;
  }

  /** How many hosts of the batch are in one of `phases`. */
  countIn(batchId: string, phases: readonly BatchPhase[]): Promise<number> {
    return this.nodes.count({ where: { batchId, batchPhase: In([...phases]) } });
  }

  /** The batches with a host queued, installing or held: the installer's work. */
  async openIds(): Promise<string[]> {
    const rows = await this.nodes.find({ where: { batchPhase: In(['QUEUED', 'ACTIVE', 'HELD']) }, select: { batchId: true } });
    return [...new Set(rows.flatMap((row) => (row.batchId ? [row.batchId] : [])))];
  }
}
