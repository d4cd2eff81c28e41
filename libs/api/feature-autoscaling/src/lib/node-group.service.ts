import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import {
  type AuditLog,
  type AutoscalingActivityEntity,
  type AutoscalingActivityKind,
  type ClusterEntity,
  type ClusterStore,
  type LockedNodeGroup,
  type MemberReason,
  type NodeEntity,
  type NodeGroupEntity,
  type NodeGroupMemberEntity,
  type NodeGroupMemberState,
  type NodeGroupProfile,
  type NodeGroupStore,
  type NodeStore,
  isUuid,
  reasonFields,
} from '@ccos/api/data-access-db';
import { type AutoscalingActivityPayload, BadUserInputError, type EventBus, FieldConflictError, NotFoundError, TOPICS, followNodeChanges } from '@ccos/api/util-graphql';
import { type Label, type RoleLabelAuthority, type ScaleDownVictim, type Taint, checkNodeLabels, checkTaints, nodeHealth, pickScaleDownVictims, roleLabelRefusal } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import type { AutoscalingObserver, AutoscalingPorts, RemovalStart, SpareHost } from './autoscaling-ports';

/** The actor of decisions cluster-autoscaler asked for (over gRPC, authenticated by its client certificate). */
export const AUTOSCALER_ACTOR = 'cluster-autoscaler';
/** The actor of what the service's own checks decided (a spare ready, a host back in the pool or out). */
export const SERVICE_ACTOR = 'ccos-scaler';

/** Node statuses in which addNode's checks ended without a usable host. */
const CHECK_FAILED = new Set(['AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED']);
/** `uname -m` by `kubernetes.io/arch`. */
const UNAME_ARCH: Record<string, string> = { amd64: 'x86_64', arm64: 'aarch64' };

/** Member states that count toward a group's current size (installed or on the way). */
const IN_GROUP: readonly NodeGroupMemberState[] = ['RESERVED', 'RUNNING', 'DELETING'];

export interface NodeGroupDefinition {
  readonly clusterId: string;
  readonly name: string;
  readonly minSize: number;
  readonly maxSize: number;
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
  readonly profile: NodeGroupProfile;
  /** Why the group's hosts take a restricted node role (see roleLabelRefusal). */
  readonly roleLabelReason?: string | null;
}

/** An instance as cluster-autoscaler sees it (NodeGroupNodes). */
export interface GroupInstance {
  /** The providerID (`ccos://<cluster>/<node id>`), or a placeholder's for a reservation no spare could fill. */
  readonly id: string;
  readonly state: 'CREATING' | 'RUNNING' | 'DELETING';
  readonly error: { readonly code: string; readonly message: string; readonly errorClass: 'OUT_OF_RESOURCES' | 'OTHER' } | null;
  readonly nodeId: string | null;
  readonly hostname: string | null;
}

/** A refusal cluster-autoscaler gets as a gRPC status; its English text is the status's details, its code and parameters ride beside it. */
export class AutoscalingRefusal extends Error {
  override readonly name = 'AutoscalingRefusal';
  constructor(
    readonly code: 'NOT_FOUND' | 'INVALID_ARGUMENT' | 'FAILED_PRECONDITION',
    readonly text: CodedText,
  ) {
    super(text.message);
  }
}

/** A member's standing from its coded text: the English text the store compares, and the code clients word it from. */
function standing(text: CodedText): MemberReason {
  return { reason: text.message, reasonCoded: bare(text) };
}

/** The instance id a reservation no spare could fill carries. */
export function placeholderId(cluster: string, group: string, index: number): string {
  return `ccos://${cluster}/unfulfilled.${group}.${index}`;
}

/** `ccos://<cluster>/<node id>`; the cluster's name when it is safe in a kubelet flag, else its id. */
export function providerIdOf(cluster: Pick<ClusterEntity, 'id' | 'name'>, nodeId: string): string {
  return `ccos://${/^[A-Za-z0-9._-]{1,253}$/.test(cluster.name) ? cluster.name : cluster.id}/${nodeId}`;
}

/**
 * Node groups over pools of spare hosts, and the decisions cluster-autoscaler asks for. A spare
 * is a node record added through addNode (every check, the dirty-host verdict) that waits in
 * READY_TO_INSTALL; a scale-up reserves spares and installs them as one batch; a scale-down runs
 * the removal and returns the host to the pool through addNode's checks again, or takes it out
 * as reinstall-required. Every decision is an activity (stored, audited, published, counted).
 */
export class NodeGroupService {
  private readonly watched = new Map<string, AsyncIterator<unknown>>();
  private readonly scaleDowns = new Set<Promise<void>>();
  private readonly cleaning = new Set<string>();
  private stopped = false;

  constructor(
    private readonly groups: NodeGroupStore,
    private readonly clusters: ClusterStore,
    private readonly nodes: NodeStore,
    private readonly ports: AutoscalingPorts,
    private readonly audit: AuditLog,
    private readonly events: EventBus,
    private readonly logger: Logger,
    private readonly observer: AutoscalingObserver | null = null,
    /** Node roles an OPERATOR may give besides worker (ALLOW_NODE_ROLES). */
    private readonly allowedNodeRoles: readonly string[] = [],
  ) {}

  /** Follows the node changes of every cluster with a group, and settles what changed while the service was down. */
  async start(): Promise<void> {
    const groups = await this.groups.allGroups();
    for (const clusterId of new Set(groups.map((group) => group.clusterId))) {
      this.watch(clusterId);
    }
    await this.reconcileAll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.watched.values()].map((iterator) => iterator.return?.()));
    this.watched.clear();
    await Promise.all([...this.scaleDowns]);
  }

  // ---------------------------------------------------------------- groups and spares

  /** `by`: the caller's role, which bounds the node-role labels the group's spares get (see roleLabelRefusal). */
  async createGroup(definition: NodeGroupDefinition, actor: string, by: RoleLabelAuthority): Promise<NodeGroupEntity> {
    const cluster = await this.clusters.find(definition.clusterId);
    if (!cluster) {
      throw new NotFoundError('cluster', definition.clusterId);
    }
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
    this.watch(cluster.id);
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
    await this.record(group, 'SPARE_ADDED', { nodeId, hostname: host.hostname }, message('autoscaling.spareAdded', { group: group.name, actor }), actor);
    // The checks may have finished before the membership was stored.
    await this.reconcileNode(nodeId);
    return (await this.groups.member(nodeId)) ?? Promise.reject(new Error(`the membership of node ${nodeId} is gone`));
  }

  /** Current members of the group (retired records left out), newest first. */
  membersOf(groupId: string): Promise<Array<NodeGroupMemberEntity & { node: NodeEntity | null }>> {
    return this.groups
      .membersOf(groupId)
      .then((rows) => rows.filter((row) => row.state !== 'RETIRED'))
      .then(async (rows) => {
        const nodes = await this.nodes.findMany(rows.map((row) => row.nodeId));
        const byId = new Map(nodes.map((node) => [node.id, node]));
        return rows.map((row) => Object.assign(row, { node: byId.get(row.nodeId) ?? null }));
      });
  }

  activitiesOf(groupId: string, limit = 100): Promise<AutoscalingActivityEntity[]> {
    return this.groups.activitiesOf(groupId, limit);
  }

  // ---------------------------------------------------------------- what cluster-autoscaler asks

  /** Every state change a node event may have caused, for every group (Refresh, start). */
  async reconcileAll(): Promise<void> {
    const open = await this.groups.memberNodeIdsIn(['CHECKING', 'SPARE', 'RESERVED', 'RUNNING']);
    for (const nodeId of open) {
      await this.reconcileNode(nodeId);
    }
  }

  async currentSize(group: NodeGroupEntity): Promise<number> {
    return this.groups.countMembers(group.id, IN_GROUP);
  }

  /** The group's instances: members installing, running or being deleted, and a placeholder for each reservation no spare filled. */
  async instances(group: NodeGroupEntity): Promise<GroupInstance[]> {
    const cluster = await this.clusterOf(group.clusterId);
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

  /**
   * Reserves `delta` spares and starts their install as one batch; returns once the target is
   * raised (the installs run in the background). A reservation beyond the spares left still
   * raises the target: the missing instances report out-of-resources, so the autoscaler backs off.
   */
  async increaseSize(clusterId: string, name: string, delta: number, actor = AUTOSCALER_ACTOR): Promise<{ reserved: number; missing: number }> {
    if (!Number.isInteger(delta) || delta <= 0) {
      throw new AutoscalingRefusal('INVALID_ARGUMENT', message('autoscaling.refusal.increaseNotPositive', { delta: String(delta) }));
    }
    const cluster = await this.clusterOf(clusterId);
    const outcome = await this.lockGroup(clusterId, name, async (locked) => {
      const { group } = locked;
      if (group.targetSize + delta > group.maxSize) {
        throw new AutoscalingRefusal('INVALID_ARGUMENT', message('autoscaling.refusal.increaseTooLarge', { target: String(group.targetSize), delta: String(delta), max: String(group.maxSize), group: group.name }));
      }
      const spares = await locked.takeSpares(delta);
      for (const spare of spares) {
        await locked.setMember(spare.nodeId, { state: 'RESERVED', ...standing(message('autoscaling.member.reserved')) });
        await locked.setProviderId(spare.nodeId, providerIdOf(cluster, spare.nodeId));
      }
      await locked.setTargetSize(group.targetSize + delta);
      return { group, reserved: spares.map((spare) => spare.nodeId) };
    });
    const { group } = outcome;
    const hosts = await this.nodes.findMany(outcome.reserved);
    for (const host of hosts) {
      await this.record(group, 'RESERVE', { nodeId: host.id, hostname: host.hostname }, message('autoscaling.reserved', { group: group.name, delta: String(delta), from: String(group.targetSize), to: String(group.targetSize + delta) }), actor);
    }
    const missing = delta - hosts.length;
    if (missing > 0) {
      await this.record(group, 'OUT_OF_RESOURCES', {}, message('autoscaling.outOfResources', { group: group.name, spares: String(hosts.length), delta: String(delta), missing: String(missing) }), actor);
    }
    if (hosts.length > 0) {
      const batchId = await this.ports.installAsBatch(clusterId, hosts.map((host) => host.id), actor);
      for (const host of hosts) {
        await this.record(group, 'INSTALL', { nodeId: host.id, hostname: host.hostname }, message('autoscaling.installing', { providerId: providerIdOf(cluster, host.id), batchId }), actor);
      }
    }
    return { reserved: hosts.length, missing };
  }

  /** Lowers the target by reservations no spare filled (never deletes a node). */
  async decreaseTargetSize(clusterId: string, name: string, delta: number): Promise<void> {
    if (!Number.isInteger(delta) || delta >= 0) {
      throw new AutoscalingRefusal('INVALID_ARGUMENT', message('autoscaling.refusal.decreaseNotNegative', { delta: String(delta) }));
    }
    const group = await this.lockGroup(clusterId, name, async (locked) => {
      const size = await locked.countMembers(['RESERVED', 'RUNNING']);
      if (locked.group.targetSize + delta < size) {
        throw new AutoscalingRefusal('FAILED_PRECONDITION', message('autoscaling.refusal.decreaseDeletesNodes', { target: String(locked.group.targetSize), size: String(size), delta: String(delta) }));
      }
      await locked.setTargetSize(locked.group.targetSize + delta);
      return locked.group;
    });
    await this.record(group, 'DECREASE_TARGET', {}, message('autoscaling.targetLowered', { group: group.name, from: String(group.targetSize), to: String(group.targetSize + delta) }));
  }

  /**
   * Deletes nodes of the group: every one is checked first (all belong to the group, the minimum
   * holds), then the target drops and each removal starts; returns without waiting for them.
   * A placeholder of an unfilled reservation only lowers the target.
   */
  async deleteNodes(clusterId: string, name: string, providerIds: readonly string[], actor = AUTOSCALER_ACTOR, chosen: readonly ScaleDownVictim[] = []): Promise<void> {
    const cluster = await this.clusterOf(clusterId);
    const { group, members } = await this.lockGroup(clusterId, name, async (lockedGroup) => {
      const locked = lockedGroup.group;
      const chosen: Array<{ nodeId: string | null; providerId: string }> = [];
      for (const providerId of providerIds) {
        if (providerId.startsWith(`ccos://${cluster.name}/unfulfilled.${locked.name}.`)) {
          chosen.push({ nodeId: null, providerId });
          continue;
        }
        const { node, member } = await lockedGroup.memberByProviderId(providerId);
        if (!node || !member || !['RESERVED', 'RUNNING'].includes(member.state)) {
          throw new AutoscalingRefusal('INVALID_ARGUMENT', message('autoscaling.refusal.notMember', { providerId: providerId || 'none', group: locked.name, deleting: member?.state === 'DELETING' }));
        }
        chosen.push({ nodeId: node.id, providerId });
      }
      if (locked.targetSize - chosen.length < locked.minSize) {
        throw new AutoscalingRefusal('FAILED_PRECONDITION', message('autoscaling.refusal.belowMinimum', { count: String(chosen.length), group: locked.name, min: String(locked.minSize), target: String(locked.targetSize) }));
      }
      await lockedGroup.setTargetSize(locked.targetSize - chosen.length);
      for (const { nodeId } of chosen) {
        if (nodeId) {
          await lockedGroup.setMember(nodeId, { state: 'DELETING', ...standing(message('autoscaling.member.deleting')) });
        }
      }
      return { group: locked, members: chosen };
    });
    for (const { nodeId, providerId } of members) {
      if (!nodeId) {
        await this.record(group, 'DECREASE_TARGET', {}, message('autoscaling.reservationDropped', { providerId }), actor);
        continue;
      }
      const node = await this.nodes.get(nodeId);
      const choice = chosen.find((victim) => victim.candidate.nodeId === nodeId);
      if (choice) {
        await this.record(group, 'VICTIM_CHOSEN', { nodeId, hostname: node.hostname }, choice.text, actor);
      }
      await this.record(group, 'DELETE', { nodeId, hostname: node.hostname }, message('autoscaling.scaleDown', { group: group.name, hostname: node.hostname, providerId }), actor);
      const task = this.removeMember(group, node, actor, { targetLowered: true }).finally(() => this.scaleDowns.delete(task));
      this.scaleDowns.add(task);
    }
  }

  /**
   * Scales the group down by `count` members it chooses itself (pickScaleDownVictims: hosts not
   * joined yet, then unhealthy members, then the newest), records each choice with its reason,
   * then deletes them as deleteNodes does. Returns the choice.
   */
  async scaleDownBy(clusterId: string, name: string, count: number, actor: string): Promise<ScaleDownVictim[]> {
    if (!Number.isInteger(count) || count <= 0) {
      throw new AutoscalingRefusal('INVALID_ARGUMENT', message('autoscaling.refusal.decreaseNotNegative', { delta: String(-count) }));
    }
    const group = await this.groupByName(clusterId, name);
    const rows = await this.groups.membersIn(group.id, ['RESERVED', 'RUNNING']);
    const nodes = new Map((await this.nodes.findMany(rows.map((row) => row.nodeId))).map((node) => [node.id, node]));
    const candidates = rows.flatMap((row) => {
      const node = nodes.get(row.nodeId);
      return node?.providerId
        ? [{ nodeId: node.id, hostname: node.hostname, joined: row.state === 'RUNNING', health: nodeHealth(node)?.state ?? null, memberSince: row.createdAt.getTime() }]
        : [];
    });
    const victims = pickScaleDownVictims(candidates, count);
    if (victims.length < count) {
      throw new AutoscalingRefusal('FAILED_PRECONDITION', message('autoscaling.refusal.tooFewMembers', { group: group.name, count: String(count), members: String(victims.length) }));
    }
    const providerIds = victims.map((victim) => nodes.get(victim.candidate.nodeId)?.providerId ?? '');
    await this.deleteNodes(clusterId, name, providerIds, actor, victims);
    return victims;
  }

  /** The cluster's running group members whose group has a spare to put in their place (remediation's REPLACE rung). */
  async replaceableMembers(clusterId: string): Promise<Set<string>> {
    const replaceable = new Set<string>();
    for (const group of await this.groups.groupsOf(clusterId)) {
      if ((await this.groups.countMembers(group.id, ['SPARE'])) === 0) {
        continue;
      }
      for (const member of await this.groups.membersIn(group.id, ['RUNNING'])) {
        replaceable.add(member.nodeId);
      }
    }
    return replaceable;
  }

  /**
   * Puts a spare of the node's group in its place: the spare is reserved and installed (the
   * group's target stays), the node is removed safely and its host goes back to the pool, or,
   * when the removal went on without the host, stays out of it, reinstall required. Returns what
   * was started, or why nothing was (no group, no spare).
   */
  async replaceMember(nodeId: string, actor: string, removal: RemovalStart = {}): Promise<{ readonly started: boolean; readonly text: CodedText }> {
    const node = await this.nodes.get(nodeId);
    const member = await this.groups.member(nodeId);
    const owner = member?.state === 'RUNNING' ? await this.groups.findGroup(member.groupId) : null;
    if (!owner) {
      return { started: false, text: message('autoscaling.notReplaceable', { hostname: node.hostname }) };
    }
    const cluster = await this.clusterOf(owner.clusterId);
    const { group, spareId } = await this.lockGroup(owner.clusterId, owner.name, async (locked) => {
      const [spare] = await locked.takeSpares(1);
      if (spare) {
        await locked.setMember(spare.nodeId, { state: 'RESERVED', ...standing(message('autoscaling.member.reservedReplacing', { hostname: node.hostname })) });
        await locked.setProviderId(spare.nodeId, providerIdOf(cluster, spare.nodeId));
        await locked.setMember(nodeId, { state: 'DELETING', ...standing(message('autoscaling.member.replacing')) });
      }
      return { group: locked.group, spareId: spare?.nodeId ?? null };
    });
    if (!spareId) {
      return { started: false, text: message('autoscaling.noSpareToReplace', { group: group.name, hostname: node.hostname }) };
    }
    const spare = await this.nodes.get(spareId);
    const text = message('autoscaling.replacing', { hostname: node.hostname, group: group.name, spare: spare.hostname });
    await this.record(group, 'RESERVE', { nodeId: spare.id, hostname: spare.hostname }, text, actor);
    const batchId = await this.ports.installAsBatch(cluster.id, [spare.id], actor);
    await this.record(group, 'INSTALL', { nodeId: spare.id, hostname: spare.hostname }, message('autoscaling.installing', { providerId: providerIdOf(cluster, spare.id), batchId }), actor);
    await this.record(group, 'DELETE', { nodeId, hostname: node.hostname }, text, actor);
    const task = this.removeMember(group, node, actor, { removal, targetLowered: false }).finally(() => this.scaleDowns.delete(task));
    this.scaleDowns.add(task);
    return { started: true, text };
  }

  /**
   * The removal run of a member leaving the group, then its host back to the pool through addNode's
   * checks, or out of it when the removal went on without the host. A removal that ends otherwise
   * leaves the member running, and gives back the target a scale-down lowered.
   */
  private async removeMember(group: NodeGroupEntity, node: NodeEntity, actor: string, options: { readonly removal?: RemovalStart; readonly targetLowered: boolean }): Promise<void> {
    const keepMember = async (reason: CodedText): Promise<void> => {
      await this.groups.setMember(node.id, { state: 'RUNNING', ...standing(reason) });
      if (options.targetLowered) {
        await this.groups.incrementTargetSize(group.id);
      }
    };
    try {
      const runId = await this.ports.startRemoval(node.id, actor, options.removal);
      const outcome = await this.ports.removalOutcome(runId);
      if (outcome.status !== 'SUCCEEDED') {
        await keepMember(message('autoscaling.member.removalEnded', { status: outcome.status.toLowerCase(), reason: outcome.reason ?? '' }));
        await this.record(group, 'DELETE_FAILED', { nodeId: node.id, hostname: node.hostname }, message('autoscaling.removalEnded', { hostname: node.hostname, status: outcome.status.toLowerCase(), reason: outcome.reason ?? message('install.noReason') }));
        return;
      }
      if ((await this.nodes.get(node.id)).reinstallRequired) {
        await this.groups.setMember(node.id, { state: 'REINSTALL_REQUIRED', ...standing(message('autoscaling.member.leftAsItIs')) });
        await this.record(group, 'REINSTALL_REQUIRED', { nodeId: node.id, hostname: node.hostname }, message('autoscaling.replacedReinstall', { hostname: node.hostname }), actor);
        return;
      }
      await this.returnToPool(group, node.id);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.logger.warn({ err: error, nodeId: node.id, group: group.name }, 'the removal of a group member failed');
      await keepMember(message('autoscaling.member.removalNotStarted', { error: detail })).catch(() => undefined);
      await this.record(group, 'DELETE_FAILED', { nodeId: node.id, hostname: node.hostname }, message('autoscaling.removalNotRun', { hostname: node.hostname, error: detail })).catch(() => undefined);
    }
  }

  /** A new record carries the host on; addNode's checks (the dirty-host verdict among them) decide whether it is a spare again. */
  private async returnToPool(group: NodeGroupEntity, removedId: string): Promise<void> {
    const removed = await this.nodes.get(removedId);
    const successor = await this.nodes.create({
      clusterId: removed.clusterId,
      hostname: removed.hostname,
      ip: removed.ip,
      sshPort: removed.sshPort,
      sshUser: removed.sshUser,
      sshCredentialsSealed: removed.sshCredentialsSealed,
      sshAuthMethod: removed.sshAuthMethod,
      hostKeyFingerprint: removed.hostKeyFingerprint,
      hostKeyAlgorithm: removed.hostKeyAlgorithm,
      labels: group.labels,
      taints: group.taints,
      status: 'ADDING',
      ...reasonFields(message('autoscaling.returningToPool', { group: group.name })),
      origin: 'ADDED',
    });
    await this.groups.continueAs(removed.id, successor.id, group.id, {
      retired: standing(message('autoscaling.member.retired', { nodeId: successor.id })),
      checking: standing(message('autoscaling.member.backChecking')),
    });
    await this.ports.checkHost(successor.id);
  }

  // ---------------------------------------------------------------- state of members

  /** Moves the node's membership along what its node record now says. */
  async reconcileNode(nodeId: string): Promise<void> {
    const member = await this.groups.member(nodeId);
    if (!member) {
      return;
    }
    const node = await this.nodes.find(nodeId);
    const group = await this.groups.findGroup(member.groupId);
    if (!node || !group) {
      return;
    }
    const move = async (from: NodeGroupMemberState, to: NodeGroupMemberState, reason: CodedText, kind: AutoscalingActivityKind | null): Promise<void> => {
      if (await this.groups.updateMemberIf(nodeId, { state: from }, { state: to, ...standing(reason) })) {
        if (kind) {
          await this.record(group, kind, { nodeId, hostname: node.hostname }, reason, SERVICE_ACTOR);
        } else {
          this.publish(group, null, null);
        }
      }
    };
    if (member.state === 'CHECKING') {
      if (node.status === 'READY_TO_INSTALL') {
        const verdict = node.hostVerdict;
        const wanted = UNAME_ARCH[group.profile.arch];
        if (node.facts.arch && wanted && node.facts.arch !== wanted) {
          await move('CHECKING', 'UNUSABLE', message('autoscaling.member.wrongArch', { arch: node.facts.arch, group: group.name, wanted: group.profile.arch }), 'SPARE_UNUSABLE');
        } else if (member.predecessorNodeId && verdict?.verdict === 'CLEANABLE' && !verdict.cleanedAt) {
          // What the host's own install through this group wrote (the Ignition's files) may go; anything else is foreign.
          const own = await this.groups.ignitionFilesWrittenFor(member.predecessorNodeId);
          const foreign = verdict.leftovers.filter((leftover) => !own.has(leftover.item));
          if (foreign.length > 0) {
            await move('CHECKING', 'REINSTALL_REQUIRED', message('autoscaling.member.foreignLeftovers', { leftovers: leftoversOf(foreign), reason: verdict.reasonCoded ?? verdict.reason }), 'REINSTALL_REQUIRED');
          } else {
            await this.cleanOwnFiles(group, node, verdict.leftovers.length);
          }
        } else if (verdict && verdict.verdict !== 'CLEAN' && !(member.predecessorNodeId && verdict.verdict === 'CLEANABLE' && verdict.cleanedAt)) {
          await move('CHECKING', 'REINSTALL_REQUIRED', message('autoscaling.member.dirty', { verdict: verdict.verdict, reason: verdict.reasonCoded ?? verdict.reason, leftovers: leftoversOf(verdict.leftovers) }), 'REINSTALL_REQUIRED');
        } else if (member.predecessorNodeId) {
          const back = { group: group.name, cleaned: Boolean(verdict?.cleanedAt), count: String(verdict?.leftovers.length ?? 0) };
          await move('CHECKING', 'SPARE', message('autoscaling.member.backInPool', back), 'RETURN_TO_POOL');
        } else {
          await move('CHECKING', 'SPARE', message('autoscaling.member.spareReady', { group: group.name }), 'SPARE_READY');
        }
      } else if (CHECK_FAILED.has(node.status)) {
        await move('CHECKING', 'UNUSABLE', message('autoscaling.member.checksFailed', { status: message('node.statusName', { status: node.status }), reason: node.statusReasonCoded ?? node.statusReason ?? '' }), 'SPARE_UNUSABLE');
      }
    } else if (member.state === 'SPARE' && node.status !== 'READY_TO_INSTALL') {
      // An operator acted on the spare (reconnect, deleted record): it waits for the checks again.
      if (node.status === 'ADDING') {
        await move('SPARE', 'CHECKING', message('autoscaling.member.checkingAgain'), null);
      } else if (CHECK_FAILED.has(node.status)) {
        await move('SPARE', 'UNUSABLE', message('autoscaling.member.spareFailed', { status: message('node.statusName', { status: node.status }), reason: node.statusReasonCoded ?? node.statusReason ?? '' }), 'SPARE_UNUSABLE');
      }
    } else if (member.state === 'RESERVED') {
      if (node.status === 'JOINED') {
        await move('RESERVED', 'RUNNING', message('autoscaling.member.joined', { hostname: node.hostname, providerId: node.providerId ?? '?' }), 'INSTALLED');
      } else if (node.status === 'INSTALL_FAILED' && !member.reason?.startsWith('install failed')) {
        // Once per failure: Refresh and every node change come back here.
        const failed = standing(message('autoscaling.member.installFailed', { reason: node.statusReasonCoded ?? node.statusReason ?? '' }));
        if (await this.groups.updateMemberIf(nodeId, { state: 'RESERVED', reason: message('autoscaling.member.reserved').message }, failed)) {
          await this.record(group, 'INSTALL_FAILED', { nodeId, hostname: node.hostname }, message('autoscaling.installFailed', { hostname: node.hostname, reason: node.statusReasonCoded ?? node.statusReason ?? '' }), SERVICE_ACTOR);
        }
      } else if (node.status === 'INSTALLING' && member.reason?.startsWith('install failed')) {
        await this.groups.updateMemberIf(nodeId, { state: 'RESERVED' }, standing(message('autoscaling.member.reserved')));
      }
    } else if (member.state === 'RUNNING' && node.status === 'REMOVED') {
      await move('RUNNING', 'RETIRED', message('autoscaling.member.leftCluster', { hostname: node.hostname }), null);
    }
  }

  /** Removes the files the host's own install wrote (the host cleanup: those files, then a fresh scan); the node change that follows settles the member. */
  private async cleanOwnFiles(group: NodeGroupEntity, node: NodeEntity, count: number): Promise<void> {
    if (this.cleaning.has(node.id)) {
      return;
    }
    // One cleanup per host across replicas: the member's reason is the claim.
    const claim = standing(message('autoscaling.member.cleaning', { count: String(count) }));
    if (!(await this.groups.updateMemberIf(node.id, { state: 'CHECKING', reasonNot: claim.reason ?? '' }, claim))) {
      return;
    }
    this.cleaning.add(node.id);
    try {
      await this.ports.cleanLeftovers(node.id, AUTOSCALER_ACTOR);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      if (await this.groups.updateMemberIf(node.id, { state: 'CHECKING' }, { state: 'REINSTALL_REQUIRED', ...standing(message('autoscaling.member.cleanupFailed', { count: String(count), error: detail })) })) {
        await this.record(group, 'REINSTALL_REQUIRED', { nodeId: node.id, hostname: node.hostname }, message('autoscaling.cleanupFailed', { error: detail }), SERVICE_ACTOR);
      }
    } finally {
      this.cleaning.delete(node.id);
    }
  }

  /** Runs `work` with the group locked (one transaction); NOT_FOUND for cluster-autoscaler when there is no such group. */
  private async lockGroup<T>(clusterId: string, name: string, work: (locked: LockedNodeGroup) => Promise<T>): Promise<T> {
    const done = await this.groups.withLockedGroup(clusterId, name, work);
    if (!done) {
      throw new AutoscalingRefusal('NOT_FOUND', message('autoscaling.refusal.groupNotFound', { name }));
    }
    return done.result;
  }

  /** A cluster the caller knows exists (its certificate or its group names it). */
  private async clusterOf(clusterId: string): Promise<ClusterEntity> {
    const cluster = await this.clusters.find(clusterId);
    if (!cluster) {
      throw new NotFoundError('cluster', clusterId);
    }
    return cluster;
  }

  /** Stores the decision, audits it, counts it and publishes it. */
  private async record(
    group: NodeGroupEntity,
    kind: AutoscalingActivityKind,
    about: { nodeId?: string; hostname?: string },
    why: string | CodedText,
    actor = AUTOSCALER_ACTOR,
  ): Promise<void> {
    const reason = typeof why === 'string' ? why : why.message;
    const reasonCoded = typeof why === 'string' ? null : bare(why);
    const saved = await this.groups.recordActivity({ groupId: group.id, kind, nodeId: about.nodeId ?? null, hostname: about.hostname ?? null, reason, reasonCoded, actor });
    await this.audit.record({
      actor,
      action: `autoscaling.${kind.toLowerCase()}`,
      targetType: about.nodeId ? 'node' : 'nodeGroup',
      targetId: about.nodeId ?? group.id,
      result: 'SUCCESS',
      detail: { group: group.name, groupId: group.id, reason, ...(reasonCoded ? { reasonCode: reasonCoded.code, reasonParams: reasonCoded.params } : {}) },
      requestId: null,
    });
    this.observer?.decision(kind, group.name);
    this.logger.info({ group: group.name, kind, nodeId: about.nodeId, hostname: about.hostname }, reason);
    this.publish(group, saved.seq, kind);
  }

  private publish(group: NodeGroupEntity, seq: string | null, kind: string | null): void {
    const payload: AutoscalingActivityPayload = { groupId: group.id, seq, kind };
    this.events.publish(TOPICS.AUTOSCALING_ACTIVITY, group.clusterId, payload);
  }

  /** Node changes of the cluster move its members along. */
  private watch(clusterId: string): void {
    if (this.watched.has(clusterId) || this.stopped) {
      return;
    }
    const iterator = followNodeChanges(
      this.events,
      clusterId,
      (change) => this.reconcileNode(change.nodeId).catch((error: unknown) => this.logger.warn({ err: error, nodeId: change.nodeId }, 'could not follow a node group member')),
      {
        stopped: () => this.stopped,
        failed: (error) => {
          this.watched.delete(clusterId);
          this.logger.warn({ err: error, clusterId }, 'stopped following node changes for node groups');
        },
      },
    );
    this.watched.set(clusterId, iterator);
  }
}

/** The first leftovers by name (data) and how many more; null when there are none. */
function leftoversOf(leftovers: ReadonlyArray<{ kind: string; item: string }>): Message | null {
  if (leftovers.length === 0) {
    return null;
  }
  const shown = leftovers.slice(0, 5).map((leftover) => leftover.item);
  return bare(message('autoscaling.member.leftovers', { items: shown.join(', '), more: Math.max(leftovers.length - 5, 0) }));
}

