import { randomUUID } from 'node:crypto';
import { type AutoscalingActivityEntity, type ClusterStore, type NodeEntity, type NodeGroupEntity, type NodeGroupMemberEntity, type NodeGroupStore, type NodeStore, isUuid } from '@ccos/api/data-access-db';
import { BadUserInputError, FieldConflictError, NotFoundError } from '@ccos/api/util-graphql';
import { type RoleLabelAuthority, checkNodeLabels, checkTaints, roleLabelRefusal } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';
import type { AutoscalingPorts, SpareHost } from './autoscaling-ports';
import type { GroupActivityLog } from './group-activity-log';
import type { MemberReconciler } from './member-reconciler';
import { AutoscalingRefusal, type GroupInstance, IN_GROUP, type NodeGroupDefinition, UNAME_ARCH, placeholderId, providerIdOf, standing } from './node-group-model';

/**
 * Node groups and their pools of spare hosts: creating a group, adding a spare (a node record
 * through addNode's every check, the dirty-host verdict among them, that then waits in
 * READY_TO_INSTALL), and reading groups, members, decisions and instances as
 * cluster-autoscaler and the console see them.
 */
export class NodeGroupRegistry {
  constructor(
    private readonly groups: NodeGroupStore,
    private readonly clusters: ClusterStore,
    private readonly nodes: NodeStore,
    private readonly ports: Pick<AutoscalingPorts, 'addNode'>,
    private readonly activity: GroupActivityLog,
    private readonly members: Pick<MemberReconciler, 'follow' | 'reconcileNode'>,
    /** Node roles an OPERATOR may give besides worker (ALLOW_NODE_ROLES). */
    private readonly allowedNodeRoles: readonly string[] = [],
  ) {}

  /** `by`: the caller's role, which bounds the node-role labels the group's spares get (see roleLabelRefusal). */
  async createGroup(definition: NodeGroupDefinition, actor: string, by: RoleLabelAuthority): Promise<NodeGroupEntity> {
    const cluster = await this.clusters.get(definition.clusterId);
    if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(definition.name)) {
      throw new BadUserInputError('input.name', message('nodeGroup.name'));
    }
    if (!Number.isInteger(definition.minSize) || definition.minSize < 0 || !Number.isInteger(definition.maxSize) || definition.maxSize < definition.minSize) {
      throw new BadUserInputError('input.maxSize', message('nodeGroup.sizes'));
    }
    const labelProblem = checkNodeLabels(definition.labels);
    const problem = labelProblem ?? checkTaints(definition.taints);
    if (problem) {
      throw new BadUserInputError(labelProblem ? 'input.labels' : 'input.taints', problem);
    }
    const roleRefusal = roleLabelRefusal(definition.labels, this.allowedNodeRoles, { role: by.role, reason: definition.roleLabelReason }, 'input.roleLabelReason');
    if (roleRefusal) {
      throw roleRefusal;
    }
    const profile = definition.profile;
    if (!(profile.cpuCores > 0) || !(profile.memoryBytes > 0) || !(profile.maxPods > 0) || !(profile.ephemeralStorageBytes >= 0) || !UNAME_ARCH[profile.arch]) {
      throw new BadUserInputError('input.profile', message('nodeGroup.profile', { arches: Object.keys(UNAME_ARCH).join(', ') }));
    }
    const group = await this.groups.insertGroup({
      id: randomUUID(),
      clusterId: cluster.id,
      name: definition.name,
      minSize: definition.minSize,
      maxSize: definition.maxSize,
      targetSize: 0,
      labels: definition.labels.map(({ key, value }) => ({ key, value })),
      taints: definition.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect })),
      profile: { cpuCores: profile.cpuCores, memoryBytes: profile.memoryBytes, ephemeralStorageBytes: profile.ephemeralStorageBytes, maxPods: profile.maxPods, arch: profile.arch },
      createdBy: actor,
    });
    if (!group) {
      throw new FieldConflictError('input.name', message('nodeGroup.nameTaken', { name: definition.name }));
    }
    this.members.follow(cluster.id);
    return group;
  }

  async group(id: string): Promise<NodeGroupEntity> {
    const group = await this.groups.findGroup(id);
    if (!group) {
      throw new NotFoundError('node group', id);
    }
    return group;
  }

  groupsOf(clusterId: string): Promise<NodeGroupEntity[]> {
    if (!isUuid(clusterId)) {
      throw new NotFoundError('cluster', clusterId);
    }
    return this.groups.groupsOf(clusterId);
  }

  /** The group by the id cluster-autoscaler knows (its name), within the cluster its certificate names. */
  async groupByName(clusterId: string, name: string): Promise<NodeGroupEntity> {
    const group = await this.groups.findGroupByName(clusterId, name);
    if (!group) {
      throw new AutoscalingRefusal('NOT_FOUND', message('autoscaling.refusal.groupNotFound', { name }));
    }
    return group;
  }

  /** Adds a host as a spare: addNode with the group's labels and taints; it waits, checked, until a scale-up picks it. */
  async addSpare(groupId: string, host: Omit<SpareHost, 'clusterId' | 'labels' | 'taints'>, actor: string): Promise<NodeGroupMemberEntity> {
    const group = await this.group(groupId);
    const nodeId = await this.ports.addNode({ ...host, clusterId: group.clusterId, labels: group.labels, taints: group.taints });
    await this.groups.insertMember({ nodeId, groupId: group.id, state: 'CHECKING', ...standing(message('autoscaling.member.checking')) });
    await this.activity.record(group, 'SPARE_ADDED', { nodeId, hostname: host.hostname }, message('autoscaling.spareAdded', { group: group.name, actor }), actor);
    // The checks may have finished before the membership was stored.
    await this.members.reconcileNode(nodeId);
    return (await this.groups.member(nodeId)) ?? Promise.reject(new Error(`the membership of node ${nodeId} is gone`));
  }

  /** Current members of the group (retired records left out), newest first. */
  async membersOf(groupId: string): Promise<Array<NodeGroupMemberEntity & { node: NodeEntity | null }>> {
    const rows = (await this.groups.membersOf(groupId)).filter((row) => row.state !== 'RETIRED');
    const byId = new Map((await this.nodes.findMany(rows.map((row) => row.nodeId))).map((node) => [node.id, node]));
    return rows.map((row) => Object.assign(row, { node: byId.get(row.nodeId) ?? null }));
  }

  activitiesOf(groupId: string, limit = 100): Promise<AutoscalingActivityEntity[]> {
    return this.groups.activitiesOf(groupId, limit);
  }

  async currentSize(group: NodeGroupEntity): Promise<number> {
    return this.groups.countMembers(group.id, IN_GROUP);
  }

  /** The group's instances: members installing, running or being deleted, and a placeholder for each reservation no spare filled. */
  async instances(group: NodeGroupEntity): Promise<GroupInstance[]> {
    const cluster = await this.clusters.get(group.clusterId);
    const rows = await this.groups.membersIn(group.id, IN_GROUP);
    const nodes = await this.nodes.findMany(rows.map((row) => row.nodeId));
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const instances: GroupInstance[] = rows.map((row) => {
      const node = byId.get(row.nodeId);
      const failed = node && (node.status === 'INSTALL_FAILED' || node.status === 'STALLED');
      return {
        id: node?.providerId ?? providerIdOf(cluster, row.nodeId),
        state: row.state === 'RUNNING' ? 'RUNNING' : row.state === 'DELETING' ? 'DELETING' : 'CREATING',
        error: failed ? { code: node.status, message: node.statusReason ?? node.status, errorClass: 'OTHER' } : null,
        nodeId: row.nodeId,
        hostname: node?.hostname ?? null,
      };
    });
    const missing = group.targetSize - rows.filter((row) => row.state !== 'DELETING').length;
    for (let index = 1; index <= missing; index++) {
      instances.push({
        id: placeholderId(cluster.name, group.name, index),
        state: 'CREATING',
        error: { code: 'NO_SPARE_HOSTS', message: message('autoscaling.noSpareHosts', { group: group.name }).message, errorClass: 'OUT_OF_RESOURCES' },
        nodeId: null,
        hostname: null,
      });
    }
    return instances;
  }

  /** The group of a Node by its providerID; null for nodes no group manages (control plane, discovered or hand-added workers). */
  async groupForNode(clusterId: string, providerId: string): Promise<NodeGroupEntity | null> {
    if (!providerId) {
      return null;
    }
    const node = await this.nodes.findByProviderId(clusterId, providerId);
    if (!node) {
      return null;
    }
    const member = await this.groups.member(node.id);
    return member && member.state !== 'RETIRED' ? this.groups.findGroup(member.groupId) : null;
  }
}
