import { type DataSource, In, type Repository } from 'typeorm';
import { NotFoundError, ROLLOUT_ACTIVE_PHASES, type RolloutNodePhase, type RolloutStatus } from '@ccos/shared/domain';
import type { CodedText } from '@ccos/shared/messages';
import { RolloutEntity, RolloutNodeEntity } from './entities/rollout.entity';
import { isUuid } from './node.store';
import { uniqueViolationOf } from './unique-violation';

export type NewRollout = Pick<RolloutEntity, 'clusterId' | 'kind' | 'maxUnavailable' | 'maxUnavailableIsPercent' | 'maintenanceWindow' | 'pauseOnAlerts' | 'drainTimeoutSeconds' | 'readyTimeoutSeconds' | 'createdBy'>;

/** What a node's executor records as it goes. */
export type RolloutNodeProgress = Partial<Pick<RolloutNodeEntity, 'phase' | 'bootIdBefore' | 'rebootedAt' | 'applyRunId' | 'problem' | 'startedAt' | 'finishedAt'>>;

/** `rollouts` and `rollout_nodes`: rolling operations and how far each of their nodes got. */
export class RolloutStore {
  private readonly rollouts: Repository<RolloutEntity>;
  private readonly nodes: Repository<RolloutNodeEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rollouts = dataSource.getRepository(RolloutEntity);
    this.nodes = dataSource.getRepository(RolloutNodeEntity);
  }

  /** Creates a RUNNING rollout over these nodes, in this order; null when the cluster already has one running or paused. */
  async create(fields: NewRollout, nodes: ReadonlyArray<{ readonly nodeId: string; readonly nodeName: string }>, at: Date): Promise<RolloutEntity | null> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const rollout = await manager.save(manager.create(RolloutEntity, { ...fields, status: 'RUNNING', reason: null, waitingFor: null, createdAt: at, updatedAt: at, finishedAt: null }));
        await manager.insert(RolloutNodeEntity, nodes.map((node, position) => ({ rolloutId: rollout.id, nodeId: node.nodeId, nodeName: node.nodeName, position, phase: 'PENDING' as const })));
        return rollout;
      });
    } catch (error) {
      if (uniqueViolationOf(error)) {
        return null;
      }
      throw error;
    }
  }

  async find(id: string): Promise<RolloutEntity | null> {
    return isUuid(id) ? this.rollouts.findOneBy({ id }) : null;
  }

  async get(id: string): Promise<RolloutEntity> {
    const rollout = await this.find(id);
    if (!rollout) {
      throw new NotFoundError('rollout', id);
    }
    return rollout;
  }

  /** The cluster's rollouts, newest first. */
  async ofCluster(clusterId: string, limit = 50): Promise<RolloutEntity[]> {
    return isUuid(clusterId) ? this.rollouts.find({ where: { clusterId }, order: { createdAt: 'DESC' }, take: limit }) : [];
  }

  /** The rollouts in these statuses (every cluster). */
  async inStatus(statuses: readonly RolloutStatus[]): Promise<RolloutEntity[]> {
    return this.rollouts.find({ where: { status: In([...statuses]) } });
  }

  /** Rollouts in progress (RUNNING, PAUSED) by cluster and status. */
  async countInProgress(): Promise<Array<{ clusterId: string; status: RolloutStatus; count: number }>> {
    const rows = await this.rollouts
      .createQueryBuilder('rollout')
      .select(['rollout.cluster_id AS cluster_id', 'rollout.status AS status', 'count(*)::int AS count'])
      .where("rollout.status IN ('RUNNING', 'PAUSED')")
      .groupBy('rollout.cluster_id, rollout.status')
      .getRawMany<{ cluster_id: string; status: RolloutStatus; count: number }>();
    return rows.map((row) => ({ clusterId: row.cluster_id, status: row.status, count: row.count }));
  }

  /** The rollout's nodes in their order. */
  async nodesOf(rolloutId: string): Promise<RolloutNodeEntity[]> {
    return this.nodes.find({ where: { rolloutId }, order: { position: 'ASC' } });
  }

  /** The nodes of these rollouts in one read, by rollout, each in order. */
  async nodesOfEach(rolloutIds: readonly string[]): Promise<Map<string, RolloutNodeEntity[]>> {
    const byRollout = new Map<string, RolloutNodeEntity[]>(rolloutIds.map((id) => [id, []]));
    if (rolloutIds.length > 0) {
      for (const node of await this.nodes.find({ where: { rolloutId: In([...rolloutIds]) }, order: { position: 'ASC' } })) {
        byRollout.get(node.rolloutId)?.push(node);
      }
    }
    return byRollout;
  }

  /**
   * The cluster's nodes a rollout in progress has out of service on purpose: in an active phase
   * (draining, rebooting, waiting for Ready, uncordoning) with no problem recorded.
   */
  async nodesInMaintenance(clusterId: string): Promise<Set<string>> {
    if (!isUuid(clusterId)) {
      return new Set();
    }
    const rows = await this.nodes
      .createQueryBuilder('node')
      .innerJoin(RolloutEntity, 'rollout', 'rollout.id = node.rollout_id')
      .select('node.node_id', 'node_id')
      .where('rollout.cluster_id = :clusterId', { clusterId })
      .andWhere("rollout.status IN ('RUNNING', 'PAUSED')")
      .andWhere('node.phase IN (:...phases)', { phases: [...ROLLOUT_ACTIVE_PHASES] })
      .andWhere('node.problem IS NULL')
      .getRawMany<{ node_id: string }>();
    return new Set(rows.map((row) => row.node_id));
  }

  async node(rolloutId: string, nodeId: string): Promise<RolloutNodeEntity | null> {
    return this.nodes.findOneBy({ rolloutId, nodeId });
  }

  /**
   * Moves the rollout to `status` only from one of `from` (so a pause never undoes a cancel, nor
   * a resume an end); the rollout after it, or null when it was in none of them.
   */
  async moveStatus(id: string, from: readonly RolloutStatus[], status: RolloutStatus, reason: CodedText | null, at: Date): Promise<RolloutEntity | null> {
    const finished = status === 'SUCCEEDED' || status === 'CANCELLED';
    const result = await this.rollouts
      .createQueryBuilder()
      .update()
      .set({ status, reason, waitingFor: null, updatedAt: at, ...(finished ? { finishedAt: at } : {}) })
      .where('id = :id AND status IN (:...from)', { id, from: [...from] })
      .execute();
    return (result.affected ?? 0) > 0 ? this.get(id) : null;
  }

  /** What a running rollout waits for now; written only when it changed (true then). */
  async recordWaiting(id: string, waitingFor: CodedText | null, at: Date): Promise<boolean> {
    const result = await this.rollouts
      .createQueryBuilder()
      .update()
      .set({ waitingFor, updatedAt: at })
      .where('id = :id AND status = :running AND waiting_for IS DISTINCT FROM CAST(:waiting AS jsonb)', { id, running: 'RUNNING', waiting: waitingFor === null ? null : JSON.stringify(waitingFor) })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Records a node's progress; with `fromPhase`, only while it is still in that phase (false when it was not). */
  async updateNode(rolloutId: string, nodeId: string, progress: RolloutNodeProgress, fromPhase?: RolloutNodePhase): Promise<boolean> {
    const where = fromPhase ? { rolloutId, nodeId, phase: fromPhase } : { rolloutId, nodeId };
    const result = await this.nodes.update(where, progress);
    return (result.affected ?? 0) > 0;
  }

  /** Forgets the problems of a rollout's nodes (an operator resumed it). */
  async clearProblems(rolloutId: string): Promise<void> {
    await this.nodes.update({ rolloutId }, { problem: null });
  }
}

