import { type DataSource, In, type Repository } from 'typeorm';
import { CsrDecisionEntity } from './entities/csr-decision.entity';

/** A decision row as it is written; the id and the time come from Postgres. */
export type NewCsrDecision = Omit<CsrDecisionEntity, 'id' | 'decidedAt'>;

/** `csr_decisions`: every approval, denial and (once per CSR) why the auto-approver left one pending. */
export class CsrDecisionStore {
  private readonly decisions: Repository<CsrDecisionEntity>;

  constructor(dataSource: DataSource) {
    this.decisions = dataSource.getRepository(CsrDecisionEntity);
  }

  insert(decision: NewCsrDecision): Promise<CsrDecisionEntity> {
    return this.decisions.save(this.decisions.create(decision));
  }

  /**
   * Writes a LEFT_PENDING decision unless the CSR has one already (a unique index makes that hold
   * across replicas and fail-overs). Returns whether it was written.
   */
  async insertLeftPendingOnce(decision: Omit<NewCsrDecision, 'decision'>): Promise<boolean> {
    const result = await this.decisions
      .createQueryBuilder()
      .insert()
      .into(CsrDecisionEntity)
      .values({ ...decision, decision: 'LEFT_PENDING' })
      .orIgnore()
      .returning(['id'])
      .execute();
    return (result.raw as unknown[]).length > 0;
  }

  /** The decisions of these CSRs of the cluster (all of its CSRs when `names` is absent), oldest first. */
  ofCluster(clusterId: string, names?: readonly string[]): Promise<CsrDecisionEntity[]> {
    return this.decisions.find({
      where: names ? { clusterId, csrName: In([...names]) } : { clusterId },
      order: { decidedAt: 'ASC', id: 'ASC' },
    });
  }
}
