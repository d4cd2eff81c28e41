import { type DataSource, type EntityManager, In, Not, type Repository } from 'typeorm';
import { AutoscalingActivityEntity, NodeGroupEntity, NodeGroupMemberEntity, type NodeGroupMemberState } from './entities/node-group.entity';
import { NodeEntity } from './entities/node.entity';
import { isUuid } from './node.store';
import { uniqueViolationOf } from './unique-violation';

/** What creating a group stores; its size and times start from the columns' defaults. */
export type NewNodeGroup = Pick<NodeGroupEntity, 'id' | 'clusterId' | 'name' | 'minSize' | 'maxSize' | 'targetSize' | 'labels' | 'taints' | 'profile' | 'createdBy'>;

/** An activity as it is recorded; its seq and time come from Postgres. */
export type NewAutoscalingActivity = Pick<AutoscalingActivityEntity, 'groupId' | 'kind' | 'nodeId' | 'hostname' | 'reason' | 'reasonCoded' | 'actor'>;

/** Where a member stands: its English text and, beside it, its message code and parameters. */
export type MemberReason = Pick<NodeGroupMemberEntity, 'reason' | 'reasonCoded'>;

/** Which member rows a conditional change applies to: the node's, in this state (and with this reason, or any but `reasonNot`). */
export interface MemberCondition {
  readonly state: NodeGroupMemberState;
  readonly reason?: string;
  readonly reasonNot?: string;
}

/**
 * What may be done to a group while it is locked ({@link NodeGroupStore.withLockedGroup}): the
 * named reads and writes a scale-up, a target decrease or a scale-down decision needs, all in
 * the one transaction that holds the group's row lock.
 */
export interface LockedNodeGroup {
  readonly group: NodeGroupEntity;
  /** Up to `limit` of the group's spares whose node is READY_TO_INSTALL, longest waiting first; rows another transaction holds are skipped. */
  takeSpares(limit: number): Promise<NodeGroupMemberEntity[]>;
  /** How many members are in these states. */
  countMembers(states: readonly NodeGroupMemberState[]): Promise<number>;
  /** The cluster's node with this providerID, and its membership of this group. */
  memberByProviderId(providerId: string): Promise<{ node: NodeEntity | null; member: NodeGroupMemberEntity | null }>;
  setMember(nodeId: string, fields: Pick<NodeGroupMemberEntity, 'state'> & MemberReason): Promise<void>;
  setProviderId(nodeId: string, providerId: string): Promise<void>;
  setTargetSize(targetSize: number): Promise<void>;
}

/**
 * `node_groups`, their `node_group_members` (one row per node record that was ever a member) and
 * the `autoscaling_activities` log. Decisions that must not interleave across replicas (scale-up,
 * target decrease, scale-down) run under the group's row lock; member moves are compare-and-set
 * on their current state, so each happens once whoever sees the node change first.
 */
export class NodeGroupStore {
  private readonly groups: Repository<NodeGroupEntity>;
  private readonly members: Repository<NodeGroupMemberEntity>;
  private readonly activities: Repository<AutoscalingActivityEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.groups = dataSource.getRepository(NodeGroupEntity);
    this.members = dataSource.getRepository(NodeGroupMemberEntity);
    this.activities = dataSource.getRepository(AutoscalingActivityEntity);
  }

  // ---------------------------------------------------------------- groups

  allGroups(): Promise<NodeGroupEntity[]> {
    return this.groups.find();
  }

  /** Stores a new group; null when the cluster has one of that name already. */
  async insertGroup(group: NewNodeGroup): Promise<NodeGroupEntity | null> {
    try {
      await this.groups.insert(this.groups.create(group));
    } catch (error) {
      if (uniqueViolationOf(error)) {
        return null;
      }
      throw error;
    }
    return this.groups.findOneByOrFail({ id: group.id });
  }

  /** The group, or null (also for an id that is no UUID). */
  findGroup(id: string): Promise<NodeGroupEntity | null> {
    return isUuid(id) ? this.groups.findOneBy({ id }) : Promise.resolve(null);
  }

  /** The cluster's groups, by name. */
  groupsOf(clusterId: string): Promise<NodeGroupEntity[]> {
    return this.groups.find({ where: { clusterId }, order: { name: 'ASC' } });
  }

  findGroupByName(clusterId: string, name: string): Promise<NodeGroupEntity | null> {
    return this.groups.findOneBy({ clusterId, name });
  }

  /** Gives a group back one instance of its target (a scale-down that did not happen). */
  async incrementTargetSize(groupId: string): Promise<void> {
    await this.groups.increment({ id: groupId }, 'targetSize', 1);
  }

  /**
   * Runs `work` with the group (by the name cluster-autoscaler knows) locked for update, in one
   * transaction; throwing in `work` undoes everything it did. Null when there is no such group.
   */
  async withLockedGroup<T>(clusterId: string, name: string, work: (locked: LockedNodeGroup) => Promise<T>): Promise<{ readonly result: T } | null> {
    return this.dataSource.transaction(async (manager) => {
      const group = await manager
        .getRepository(NodeGroupEntity)
        .createQueryBuilder('g')
        .where('g.cluster_id = :clusterId AND g.name = :name', { clusterId, name })
        .setLock('pessimistic_write')
        .getOne();
      return group ? { result: await work(lockedGroup(manager, group)) } : null;
    });
  }

  // ---------------------------------------------------------------- members

  async insertMember(member: Pick<NodeGroupMemberEntity, 'nodeId' | 'groupId' | 'state'> & MemberReason): Promise<NodeGroupMemberEntity> {
    await this.members.insert(member);
    return this.members.findOneByOrFail({ nodeId: member.nodeId });
  }

  /** The membership of a node record, if it ever was a member. */
  member(nodeId: string): Promise<NodeGroupMemberEntity | null> {
    return this.members.findOneBy({ nodeId });
  }

  /** The group's members, newest first (retired ones too). */
  membersOf(groupId: string): Promise<NodeGroupMemberEntity[]> {
    return this.members.find({ where: { groupId }, order: { createdAt: 'DESC' } });
  }

  /** The current members (retired ones left out) of these groups, in one read. */
  currentMembersOf(groupIds: readonly string[]): Promise<NodeGroupMemberEntity[]> {
    return groupIds.length === 0 ? Promise.resolve([]) : this.members.find({ where: { groupId: In([...groupIds]), state: Not('RETIRED') } });
  }

  /** The group's members in these states, oldest first. */
  membersIn(groupId: string, states: readonly NodeGroupMemberState[]): Promise<NodeGroupMemberEntity[]> {
    return this.members.find({ where: { groupId, state: In([...states]) }, order: { createdAt: 'ASC' } });
  }

  countMembers(groupId: string, states: readonly NodeGroupMemberState[]): Promise<number> {
    return this.members.count({ where: { groupId, state: In([...states]) } });
  }

  /** The node ids of every member, of any group, in these states. */
  async memberNodeIdsIn(states: readonly NodeGroupMemberState[]): Promise<string[]> {
    const rows = await this.members.find({ where: { state: In([...states]) }, select: { nodeId: true } });
    return rows.map((row) => row.nodeId);
  }

  /** Changes the membership whatever its state. */
  async setMember(nodeId: string, fields: Partial<Pick<NodeGroupMemberEntity, 'state'>> & MemberReason): Promise<void> {
    await this.members.update({ nodeId }, fields);
  }

  /** Changes the membership only if it matches `when`; returns whether it did (once, across replicas). */
  async updateMemberIf(nodeId: string, when: MemberCondition, fields: Partial<Pick<NodeGroupMemberEntity, 'state'>> & MemberReason): Promise<boolean> {
    const reason = when.reason !== undefined ? { reason: when.reason } : when.reasonNot !== undefined ? { reason: Not(when.reasonNot) } : {};
    const changed = await this.members.update({ nodeId, state: when.state, ...reason }, fields);
    return (changed.affected ?? 0) === 1;
  }

  /**
   * A removed member's host continues as a new node record: the removed record (and those it
   * succeeded) point at the successor, the old membership retires, and the successor joins the
   * group CHECKING, all at once.
   */
  async continueAs(removedId: string, successorId: string, groupId: string, reasons: { readonly retired: MemberReason; readonly checking: MemberReason }): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.getRepository(NodeEntity).createQueryBuilder().update().set({ successorNodeId: successorId }).where('id = :id OR successor_node_id = :id', { id: removedId }).execute();
      await manager.getRepository(NodeGroupMemberEntity).update({ nodeId: removedId }, { state: 'RETIRED', ...reasons.retired });
      await manager.getRepository(NodeGroupMemberEntity).insert({ nodeId: successorId, groupId, state: 'CHECKING', ...reasons.checking, predecessorNodeId: removedId });
    });
  }

  /** Paths the node's install runs wrote: APPLY_IGNITION's report of the Ignition files it applied. */
  async ignitionFilesWrittenFor(nodeId: string): Promise<Set<string>> {
    const rows = await this.dataSource.query<Array<{ path: string }>>(
      `SELECT DISTINCT f->>'path' AS path
         FROM install_runs r JOIN step_events e ON e.run_id = r.id, jsonb_array_elements(COALESCE(e.detail->'files', '[]'::jsonb)) f
        WHERE r.node_id = $1 AND e.step = 'APPLY_IGNITION' AND e.status = 'SUCCEEDED'`,
      [nodeId],
    );
    return new Set(rows.map((row) => row.path));
  }

  // ---------------------------------------------------------------- activities

  recordActivity(activity: NewAutoscalingActivity): Promise<AutoscalingActivityEntity> {
    return this.activities.save(this.activities.create(activity));
  }

  /** The group's latest activities, newest first, at most `limit` (1..500). */
  activitiesOf(groupId: string, limit: number): Promise<AutoscalingActivityEntity[]> {
    return this.activities.find({ where: { groupId }, order: { seq: 'DESC' }, take: Math.min(Math.max(limit, 1), 500) });
  }
}

function lockedGroup(manager: EntityManager, group: NodeGroupEntity): LockedNodeGroup {
  const members = manager.getRepository(NodeGroupMemberEntity);
  const nodes = manager.getRepository(NodeEntity);
  return {
    group,
    takeSpares: (limit) =>
      members
        .createQueryBuilder('member')
        .innerJoin(NodeEntity, 'node', 'node.id = member.node_id')
        .where("member.group_id = :groupId AND member.state = 'SPARE' AND node.status = 'READY_TO_INSTALL'", { groupId: group.id })
        .orderBy('member.updated_at', 'ASC')
        .limit(limit)
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .getMany(),
    countMembers: (states) => members.count({ where: { groupId: group.id, state: In([...states]) } }),
    async memberByProviderId(providerId) {
      const node = providerId ? await nodes.findOneBy({ clusterId: group.clusterId, providerId }) : null;
      const member = node ? await members.findOneBy({ nodeId: node.id, groupId: group.id }) : null;
      return { node, member };
    },
    async setMember(nodeId, fields) {
      await members.update({ nodeId }, fields);
    },
    async setProviderId(nodeId, providerId) {
      await nodes.update({ id: nodeId }, { providerId });
    },
    async setTargetSize(targetSize) {
      await manager.getRepository(NodeGroupEntity).update({ id: group.id }, { targetSize });
    },
  };
}
