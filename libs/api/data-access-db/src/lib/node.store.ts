import { bare, type CodedText } from '@ccos/shared/messages';
import { randomUUID } from 'node:crypto';
import { type DataSource, type EntityManager, In, type Repository } from 'typeorm';
import { type NodeEvent, NotFoundError, PreconditionError, everJoinedAfter, transition } from '@ccos/shared/domain';
import { NodeEntity } from './entities/node.entity';
import { entityChanges } from './entity-changes';

/** A status reason: a coded message (the catalogue's English text is stored beside its code), or plain text. */
export type ReasonText = string | CodedText;

/** The status-reason columns for `reason`: the English text and, when it has one, its code and parameters. */
export function reasonFields(reason: ReasonText | null): Pick<NodeEntity, 'statusReason' | 'statusReasonCoded'> {
  if (reason === null || typeof reason === 'string') {
    return { statusReason: reason, statusReasonCoded: null };
  }
  return { statusReason: reason.message, statusReasonCoded: bare(reason) };
}

/**
 * Told of every node the store created, changed or deleted, after the fact. The composition root
 * wires the service layer's publisher here (`util-graphql`'s `nodeChangePublisher`): the store
 * only reports, it knows no topics.
 */
export type NodeChangeListener = (node: Pick<NodeEntity, 'id' | 'clusterId' | 'status'>) => void;

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

  /**
   * The raw TypeORM repository. Only feature-nodes still reads through it (issue 17: its
   * queries move into named methods here); no other feature may.
   */
  get repository(): Repository<NodeEntity> {
    return this.nodes;
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
   * Creates several nodes in one transaction (all or none), after `before` ran in it (the
   * batch record they point to), and tells subscribers. `supersede` names DISCOVERED records
   * (Nodes found in the cluster) whose names the new nodes take: in the same transaction they
   * become REMOVED through HOST_ADDED_AGAIN, so no moment has both or neither.
   */
  async createMany(
    rows: ReadonlyArray<NodeFields & Pick<NodeEntity, 'clusterId' | 'hostname' | 'status'>>,
    before: (manager: EntityManager) => Promise<void> = async () => undefined,
    supersede: { readonly ids: readonly string[]; readonly reason: string } = { ids: [], reason: '' },
  ): Promise<NodeEntity[]> {
    const rule = transition('JOINED', 'HOST_ADDED_AGAIN');
    const { created, superseded } = await this.nodes.manager.transaction(async (manager) => {
      await before(manager);
      const repository = manager.getRepository(NodeEntity);
      const gone: NodeEntity[] = [];
      for (const id of supersede.ids) {
        const update = await repository
          .createQueryBuilder()
          .update(NodeEntity)
          .set(entityChanges<NodeEntity>({ status: rule.ok ? rule.to : 'REMOVED', statusReason: supersede.reason, ready: false }))
          .where("id = :id AND status = 'JOINED' AND origin = 'DISCOVERED'", { id })
          .execute();
        if (update.affected !== 1) {
          throw new PreconditionError('a Node found in the cluster under this name changed meanwhile; add the host again');
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
        throw new PreconditionError(`node ${node.hostname}: ${result.reason}`, { status: node.status });
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
    throw new PreconditionError(`node ${id} is changing too often to apply ${event}; try again`);
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
   * state. Returns null, and tells nobody, when the node has left `status`.
   */
  async updateWhile(id: string, status: NodeEntity['status'], fields: NodeFields): Promise<NodeEntity | null> {
    const update = await this.nodes.createQueryBuilder().update(NodeEntity).set(entityChanges<NodeEntity>(withReasonCode(fields))).where('id = :id AND status = :status', { id, status }).execute();
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

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

/** A reason without a code replaces the coded one too, so the two never disagree. */
function withReasonCode(fields: NodeFields): NodeFields {
  return 'statusReason' in fields && !('statusReasonCoded' in fields) ? { ...fields, statusReasonCoded: null } : fields;
}
