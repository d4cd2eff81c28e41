import { type DataSource, type Repository } from 'typeorm';
import { NotFoundError } from '@ccos/shared/domain';
import { ClusterEntity } from './entities/cluster.entity';
import { isUuid } from './node.store';
import { uniqueViolationOf } from './unique-violation';

/** What registering a cluster stores; the rest takes the columns' defaults. */
export type NewCluster = Pick<ClusterEntity, 'id' | 'name' | 'apiServerUrl' | 'vip' | 'credentialsSealed' | 'credentialKind'> & Partial<ClusterEntity>;

/** `clusters`: the registered clusters and their settings. */
export class ClusterStore {
  private readonly clusters: Repository<ClusterEntity>;

  constructor(dataSource: DataSource) {
    this.clusters = dataSource.getRepository(ClusterEntity);
  }

  existsNamed(name: string): Promise<boolean> {
    return this.clusters.existsBy({ name });
  }

  /** Stores a new cluster; null when its name is taken (a unique index decides when two registrations race). */
  async insert(cluster: NewCluster): Promise<ClusterEntity | null> {
    try {
      return await this.clusters.save(this.clusters.create(cluster));
    } catch (error) {
      if (uniqueViolationOf(error)) {
        return null;
      }
      throw error;
    }
  }

  /** Every cluster, by name. */
  list(): Promise<ClusterEntity[]> {
    return this.clusters.find({ order: { name: 'ASC' } });
  }

  /** The cluster registered under this name, or null. */
  findNamed(name: string): Promise<ClusterEntity | null> {
    return this.clusters.findOneBy({ name });
  }

  /** The cluster, or null (also for an id that is no UUID). */
  find(id: string): Promise<ClusterEntity | null> {
    return isUuid(id) ? this.clusters.findOneBy({ id }) : Promise.resolve(null);
  }

  /** The cluster; NotFoundError when there is none. */
  async get(id: string): Promise<ClusterEntity> {
    const cluster = await this.find(id);
    if (!cluster) {
      throw new NotFoundError('cluster', id);
    }
    return cluster;
  }

  /**
   * Keeps the outcome of a readiness check: when, and which checks failed. Not a settings change,
   * so the row's version stays (a settings form open meanwhile still saves).
   */
  async recordReadiness(id: string, failing: readonly string[], checkedAt: Date): Promise<void> {
    await this.clusters.query('UPDATE clusters SET readiness_checked_at = $2, readiness_failing = $3 WHERE id = $1', [id, checkedAt, [...failing]]);
  }

  /** Clusters with a remediation policy that is on. */
  withRemediation(): Promise<ClusterEntity[]> {
    return this.clusters.createQueryBuilder('cluster').where(`(cluster.remediation_policy ->> 'enabled')::boolean`).getMany();
  }

  /** Records whether the cap holds remediation now (null: it does not). Not a settings change: the row's version stays. */
  async recordRemediationHeld(id: string, held: ClusterEntity['remediationHeld']): Promise<void> {
    await this.clusters.query('UPDATE clusters SET remediation_held = $2 WHERE id = $1', [id, held === null ? null : JSON.stringify(held)]);
  }

  /** Writes the cluster's changed settings. */
  save(cluster: ClusterEntity): Promise<ClusterEntity> {
    return this.clusters.save(cluster);
  }
}
