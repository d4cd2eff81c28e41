import { randomUUID } from 'node:crypto';
import { type DataSource, In, IsNull, Not, type Repository } from 'typeorm';
import { type NodeEvent, NotFoundError, PreconditionError, eventText, everJoinedAfter, transition } from '@ccos/shared/domain';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import { InstallRunEntity } from './entities/install-run.entity';
import { NodeBatchEntity } from './entities/node-batch.entity';
import { NodeEntity } from './entities/node.entity';
import { entityChanges } from './entity-changes';

/** A node batch as `createMany` stores it, in the transaction of its hosts. */
export type NewNodeBatch = Pick<NodeBatchEntity, 'id' | 'clusterId' | 'createdBy' | 'source' | 'concurrency'>;

/** The fields of a cluster's live record the bulk add checks its rows against. */
export type NodeListing = Pick<NodeEntity, 'id' | 'hostname' | 'ip' | 'status' | 'origin'>;

/**
 * A status reason: always a coded message (the catalogue's English text is stored beside its
 * code), never a bare string, so a Chinese page shows it in Chinese.
 */
export type ReasonText = CodedText;

/** The status-reason columns for `reason`: the English text, its code and parameters. */
export function reasonFields(reason: ReasonText | null): Pick<NodeEntity, 'statusReason' | 'statusReasonCoded'> {
  if (reason === null) {
    return { statusReason: null, statusReasonCoded: null };
  }
  return { statusReason: reason.message, statusReasonCoded: bare(reason) };
}

/**
 * Told of every node the store created, changed or deleted, after the fact. The composition root
 * wires the service layer's publisher here (`util-graphql`'s `nodeChangePublisher`): the store
 * only reports, it knows no topics.
 */
export type NodeChangeListener = (node: Pick<NodeEntity, 'id' | 'clusterId' | 'status' | 'batchId'>) => void;

type NodeFields = Partial<Omit<NodeEntity, 'id' | 'status' | 'createdAt' | 'updatedAt' | 'version'>>;

/**
 * Node records and their status changes. Every status change goes through the domain
 * state machine and a compare-and-set on the current status, so two concurrent actors
 * (a background SSH job and an operator, or two replicas) cannot both move a node.
 * Each change is reported to the {@link NodeChangeListener}.
 */
export class NodeStore {
  private readonly nodes: Repository<NodeEntity>;

  constructor(
    dataSource: DataSource,
    private readonly changed: NodeChangeListener,
  ) {
    this.nodes = dataSource.getRepository(NodeEntity);
  }

  /** The node, or null when there is none with that id. */
  find(id: string): Promise<NodeEntity | null> {
    return isUuid(id) ? this.nodes.findOneBy({ id }) : Promise.resolve(null);
  }

  /** The nodes with these ids that exist, in no particular order. */
  async findMany(ids: readonly string[]): Promise<NodeEntity[]> {
    const valid = ids.filter(isUuid);
    return valid.length > 0 ? this.nodes.findBy({ id: In(valid) }) : [];
  }

  /** The cluster's node with this providerID (cluster-autoscaler's name for it), or null. */
  findByProviderId(clusterId: string, providerId: string): Promise<NodeEntity | null> {
    return this.nodes.findOneBy({ clusterId, providerId });
  }

  /** The cluster's nodes (removed ones too), by hostname, then oldest first; with `first`, only that many from the start. */
  listOf(clusterId: string, first?: number): Promise<NodeEntity[]> {
    return this.nodes.find({ where: { clusterId }, order: { hostname: 'ASC', createdAt: 'ASC' }, ...(first === undefined ? {} : { take: first }) });
  }

  /** Every node in `status` (a restart resumes the ADDING ones). */
  withStatus(status: NodeEntity['status']): Promise<NodeEntity[]> {
    return this.nodes.findBy({ status });
  }

  /** The nodes in these statuses whose hosts the service can reach: it holds their SSH credentials and address (those it installed). */
  withHostAccess(statuses: ReadonlyArray<NodeEntity['status']>): Promise<Array<NodeEntity & { ip: string }>> {
    return this.nodes.find({ where: { status: In([...statuses]), sshCredentialsSealed: Not(IsNull()), ip: Not(IsNull()) } }) as Promise<Array<NodeEntity & { ip: string }>>;
  }

  /** The cluster's records that are not REMOVED; only those `named`, when given. */
  activeOf(clusterId: string, named: readonly string[] | null = null): Promise<NodeEntity[]> {
    return this.nodes.find({
      where: named ? named.map((hostname) => ({ clusterId, hostname, status: Not('REMOVED' as const) })) : { clusterId, status: Not('REMOVED' as const) },
    });
  }

  /** `activeOf` the whole cluster, only the fields that tell whether a new host clashes with one. */
  listingOf(clusterId: string): Promise<NodeListing[]> {
    return this.nodes.find({ where: { clusterId, status: Not('REMOVED') }, select: { id: true, hostname: true, ip: true, status: true, origin: true } });
  }

  /**
   * By hostname, the latest record of the cluster with one of these hostnames that joined and was
   * REMOVED since `since`: its machine may still hold certificates issued for the name, which
   * removal cannot revoke. One query for any number of names (a batch's rows).
   */
  async removedAfterJoiningSince(clusterId: string, hostnames: readonly string[], since: Date): Promise<Map<string, NodeEntity>> {
    if (hostnames.length === 0) {
      return new Map();
    }
    const removed = await this.nodes
      .createQueryBuilder('node')
      .where("node.cluster_id = :clusterId AND node.hostname IN (:...hostnames) AND node.status = 'REMOVED' AND node.ever_joined AND node.updated_at >= :since", { clusterId, hostnames: [...new Set(hostnames)], since })
      .orderBy('node.updated_at', 'ASC')
      .getMany();
    // Ascending, so the latest record of each name is the one the map keeps.
    return new Map(removed.map((node) => [node.hostname, node]));
  }

  /** A record of the cluster, not REMOVED and not `except`, with this hostname or this IP; null when none. */
  clashOf(clusterId: string, hostname: string, ip: string, except?: string): Promise<NodeEntity | null> {
    const query = this.nodes
      .createQueryBuilder('node')
      .where('node.cluster_id = :clusterId AND node.status <> :removed', { clusterId, removed: 'REMOVED' })
      .andWhere('(node.hostname = :hostname OR node.ip = :ip)', { hostname, ip });
    return (except ? query.andWhere('node.id <> :superseded', { superseded: except }) : query).getOne();
  }

  /** The cluster's JOINED record of a Node found there (origin DISCOVERED) with this hostname, or null. */
  discoveredNamed(clusterId: string, hostname: string): Promise<NodeEntity | null> {
    return this.nodes.findOneBy({ clusterId, hostname, status: 'JOINED', origin: 'DISCOVERED' });
  }

  /**
   * A REMOVED record that once joined, of the machine with this machine-id, other than `nodeId`
   * and not the record `nodeId` succeeds (that one is the host's own earlier membership in a
   * node group, ended by a completed scale-down); null when none.
   */
  removedMachine(machineId: string, nodeId: string): Promise<NodeEntity | null> {
    return this.nodes
      .createQueryBuilder('node')
      .where("node.status = 'REMOVED' AND node.ever_joined AND node.facts->>'machineId' = :machineId AND node.id <> :id AND node.successor_node_id IS DISTINCT FROM :id", { machineId, id: nodeId })
      .getOne();
  }

  /** Whether the node has had any install run. */
  async hasInstallRuns(nodeId: string): Promise<boolean> {
    return (await this.nodes.manager.count(InstallRunEntity, { where: { nodeId } })) > 0;
  }

  /** Nodes by cluster and status, removed ones left out (the metrics; every replica reads the same). */
  async countByStatus(): Promise<Array<{ clusterId: string; status: string; count: number }>> {
    const rows: Array<{ cluster_id: string; status: string; count: string }> = await this.nodes.query(
      `SELECT cluster_id, status, count(*) AS count FROM nodes WHERE status <> 'REMOVED' GROUP BY cluster_id, status`,
    );
    return rows.map((row) => ({ clusterId: row.cluster_id, status: row.status, count: Number(row.count) }));
  }

  /** What the health of every node in one of `statuses` is judged from (the metrics). */
  healthInputsOf(statuses: readonly NodeEntity['status'][]): Promise<Array<Pick<NodeEntity, 'clusterId' | 'status' | 'readyStatus' | 'readySince' | 'hostHealth'>>> {
    return this.nodes.find({ where: { status: In([...statuses]) }, select: { clusterId: true, status: true, readyStatus: true, readySince: true, hostHealth: true } });
  }

  async get(id: string): Promise<NodeEntity> {
    const node = isUuid(id) ? await this.nodes.findOneBy({ id }) : null;
    if (!node) {
      throw new NotFoundError('node', id);
    }
    return node;
  }

  async create(fields: NodeFields & Pick<NodeEntity, 'clusterId' | 'hostname' | 'status'>): Promise<NodeEntity> {
    const node = await this.nodes.save(this.nodes.create({ id: randomUUID(), ...fields }));
    this.publish(node);
    return node;
  }

  /**
   * Records many Nodes found in a cluster, up to {@link DISCOVERED_ROWS_A_STATEMENT} a statement: a
   * row whose name or address a record of the cluster already holds (another replica's discovery,
   * an added host) is skipped, not an error. Tells subscribers of each record it created and
   * returns them; the caller decides what to do with the rows it skipped.
   */
  async createDiscovered(rows: ReadonlyArray<NodeFields & Pick<NodeEntity, 'clusterId' | 'hostname' | 'status'>>): Promise<NodeEntity[]> {
    const created: NodeEntity[] = [];
    for (let start = 0; start < rows.length; start += DISCOVERED_ROWS_A_STATEMENT) {
      const chunk = rows.slice(start, start + DISCOVERED_ROWS_A_STATEMENT).map((fields) => entityChanges<NodeEntity>({ id: randomUUID(), ...fields }));
      const inserted = await this.nodes.createQueryBuilder().insert().into(NodeEntity).values(chunk).orIgnore().returning(['id']).execute();
      const ids = (inserted.raw as Array<{ id: string }>).map((row) => row.id);
      if (ids.length > 0) {
        created.push(...(await this.nodes.findBy({ id: In(ids) })));
      }
    }
    for (const node of created) {
      this.publish(node);
    }
    return created;
  }

  /**
   * Creates several nodes in one transaction (all or none), after `batch` (the batch record they
   * point to, when given) is inserted in it, and tells subscribers. `supersede` names DISCOVERED records
   * (Nodes found in the cluster) whose names the new nodes take: in the same transaction they
   * become REMOVED through HOST_ADDED_AGAIN, so no moment has both or neither.
   */
  async createMany(
    rows: ReadonlyArray<NodeFields & Pick<NodeEntity, 'clusterId' | 'hostname' | 'status'>>,
    batch: NewNodeBatch | null = null,
    supersede: { readonly ids: readonly string[]; readonly reason: ReasonText | null } = { ids: [], reason: null },
  ): Promise<NodeEntity[]> {
    const rule = transition('JOINED', 'HOST_ADDED_AGAIN');
    const { created, superseded } = await this.nodes.manager.transaction(async (manager) => {
      if (batch) {
        await manager.getRepository(NodeBatchEntity).insert(batch);
      }
      const repository = manager.getRepository(NodeEntity);
      const gone: NodeEntity[] = [];
      for (const id of supersede.ids) {
        const update = await repository
          .createQueryBuilder()
          .update(NodeEntity)
          .set(entityChanges<NodeEntity>({ status: rule.ok ? rule.to : 'REMOVED', ...reasonFields(supersede.reason), ready: false }))
          .where("id = :id AND status = 'JOINED' AND origin = 'DISCOVERED'", { id })
          .execute();
        if (update.affected !== 1) {
          throw new PreconditionError(message('node.discoveredChanged'));
        }
        gone.push(await repository.findOneByOrFail({ id }));
      }
      return { created: await repository.save(rows.map((fields) => repository.create({ id: randomUUID(), ...fields })), { chunk: 100 }), superseded: gone };
    });
    superseded.forEach((node) => this.publish(node));
    created.forEach((node) => this.publish(node));
    return created;
  }

  /**
   * Applies `event` to the node if the state machine allows it from its current status,
   * together with `fields`; throws FAILED_PRECONDITION (with the reason) otherwise.
   */
  async transition(id: string, event: NodeEvent, statusReason: ReasonText | null, fields: NodeFields = {}): Promise<NodeEntity> {
    const reason = reasonFields(statusReason);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const node = await this.get(id);
      const result = transition(node.status, event);
      if (!result.ok) {
        throw new PreconditionError(message('node.refused', { node: node.hostname, reason: bare(result.reason) }), { status: node.status });
      }
      const update = await this.nodes
        .createQueryBuilder()
        .update(NodeEntity)
        .set(entityChanges<NodeEntity>({ ...fields, status: result.to, ...reason, everJoined: everJoinedAfter(result.to, node.everJoined) }))
        .where('id = :id AND status = :status', { id, status: node.status })
        .execute();
      if (update.affected === 1) {
        const changed = await this.get(id);
        this.publish(changed);
        return changed;
      }
      // Someone else changed the status in between: decide again on the new status.
    }
    throw new PreconditionError(message('node.changingTooOften', { node: id, event: eventText(event) }));
  }

  /** Changes fields other than the status, and tells subscribers. */
  async update(id: string, fields: NodeFields): Promise<NodeEntity> {
    await this.nodes.update(id, entityChanges<NodeEntity>(withReasonCode(fields)));
    const node = await this.get(id);
    this.publish(node);
    return node;
  }

  /**
   * `update`, but only while the node is still in `status`: a report that was read before the
   * node moved on (an install's last progress racing its success) must not write over the newer
   * state. Returns null, and tells nobody, when the node has left `status` (or, with `reasonCode`,
   * when its reason has another code; with `runWaiting`, when that install run no longer waits for
   * an install slot).
   */
  async updateWhile(id: string, status: NodeEntity['status'], fields: NodeFields, options: { readonly runWaiting?: string; readonly reasonCode?: string } = {}): Promise<NodeEntity | null> {
    const query = this.nodes.createQueryBuilder().update(NodeEntity).set(entityChanges<NodeEntity>(withReasonCode(fields))).where('id = :id AND status = :status', { id, status });
    if (options.reasonCode !== undefined) {
      query.andWhere("status_reason_coded->>'code' = :reasonCode", { reasonCode: options.reasonCode });
    }
    if (options.runWaiting !== undefined) {
      // Only while that install run still waits for a slot: its admission writes the node after it, never before.
      query.andWhere("EXISTS (SELECT 1 FROM install_runs r WHERE r.id = :runId AND r.status = 'RUNNING' AND r.admitted_at IS NULL)", { runId: options.runWaiting });
    }
    const update = await query.execute();
    if (update.affected !== 1) {
      return null;
    }
    const node = await this.get(id);
    this.publish(node);
    return node;
  }

  /** Deletes the record (its runs and events go with it) and tells subscribers. */
  async delete(node: NodeEntity): Promise<void> {
    await this.nodes.delete({ id: node.id });
    this.publish(node);
  }

  private publish(node: NodeEntity): void {
    this.changed(node);
  }
}

/** Rows of one INSERT of discovered Nodes (15 columns each: well below Postgres' 65,535 parameters). */
export const DISCOVERED_ROWS_A_STATEMENT = 500;

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

/** A reason without a code replaces the coded one too, so the two never disagree. */
function withReasonCode(fields: NodeFields): NodeFields {
  return 'statusReason' in fields && !('statusReasonCoded' in fields) ? { ...fields, statusReasonCoded: null } : fields;
}
