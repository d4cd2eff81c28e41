import type { Logger } from 'pino';
import { type ClusterStore, type LockedNodeGroup, type NodeEntity, type NodeGroupEntity, type NodeGroupStore, type NodeStore, reasonFields } from '@ccos/api/data-access-db';
import { type ScaleDownVictim, nodeHealth, pickScaleDownVictims } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import type { AutoscalingPorts, RemovalStart } from './autoscaling-ports';
import type { GroupActivityLog } from './group-activity-log';
import { AUTOSCALER_ACTOR, AutoscalingRefusal, providerIdOf, standing } from './node-group-model';
import type { NodeGroupRegistry } from './node-group-registry';

/**
 * What changes a group's size: a scale-up reserves spares and installs them as one batch; a
 * scale-down (named nodes, or members the group chooses) lowers the target and runs each
 * removal, then returns the host to the pool through addNode's checks again, or takes it out as
 * reinstall-required; a replacement puts a spare in a member's place. The group is locked while
 * a decision is taken; the installs and removals run on after the call returns.
 */
export class ScalingOperations {
  private readonly removals = new Set<Promise<void>>();

  constructor(
    private readonly groups: NodeGroupStore,
    private readonly clusters: ClusterStore,
    private readonly nodes: NodeStore,
    private readonly ports: Pick<AutoscalingPorts, 'installAsBatch' | 'startRemoval' | 'removalOutcome' | 'checkHost'>,
    private readonly activity: GroupActivityLog,
    private readonly registry: Pick<NodeGroupRegistry, 'groupByName'>,
    private readonly logger: Logger,
  ) {}

  /** Resolves once every removal a scale-down or replacement started has ended (the service's shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.removals]);
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
    const cluster = await this.clusters.get(clusterId);
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
      await this.activity.record(group, 'RESERVE', { nodeId: host.id, hostname: host.hostname }, message('autoscaling.reserved', { group: group.name, delta: String(delta), from: String(group.targetSize), to: String(group.targetSize + delta) }), actor);
    }
    const missing = delta - hosts.length;
    if (missing > 0) {
      await this.activity.record(group, 'OUT_OF_RESOURCES', {}, message('autoscaling.outOfResources', { group: group.name, spares: String(hosts.length), delta: String(delta), missing: String(missing) }), actor);
    }
    if (hosts.length > 0) {
      const batchId = await this.ports.installAsBatch(clusterId, hosts.map((host) => host.id), actor);
      for (const host of hosts) {
        await this.activity.record(group, 'INSTALL', { nodeId: host.id, hostname: host.hostname }, message('autoscaling.installing', { providerId: providerIdOf(cluster, host.id), batchId }), actor);
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
    await this.activity.record(group, 'DECREASE_TARGET', {}, message('autoscaling.targetLowered', { group: group.name, from: String(group.targetSize), to: String(group.targetSize + delta) }));
  }

  /**
   * Deletes nodes of the group: every one is checked first (all belong to the group, the minimum
   * holds), then the target drops and each removal starts; returns without waiting for them.
   * A placeholder of an unfilled reservation only lowers the target.
   */
  async deleteNodes(clusterId: string, name: string, providerIds: readonly string[], actor = AUTOSCALER_ACTOR, chosen: readonly ScaleDownVictim[] = []): Promise<void> {
    const cluster = await this.clusters.get(clusterId);
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
        await this.activity.record(group, 'DECREASE_TARGET', {}, message('autoscaling.reservationDropped', { providerId }), actor);
        continue;
      }
      const node = await this.nodes.get(nodeId);
      const choice = chosen.find((victim) => victim.candidate.nodeId === nodeId);
      if (choice) {
        await this.activity.record(group, 'VICTIM_CHOSEN', { nodeId, hostname: node.hostname }, choice.text, actor);
      }
      await this.activity.record(group, 'DELETE', { nodeId, hostname: node.hostname }, message('autoscaling.scaleDown', { group: group.name, hostname: node.hostname, providerId }), actor);
      const task = this.removeMember(group, node, actor, { targetLowered: true }).finally(() => this.removals.delete(task));
      this.removals.add(task);
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
    const group = await this.registry.groupByName(clusterId, name);
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
    const cluster = await this.clusters.get(owner.clusterId);
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
    await this.activity.record(group, 'RESERVE', { nodeId: spare.id, hostname: spare.hostname }, text, actor);
    const batchId = await this.ports.installAsBatch(cluster.id, [spare.id], actor);
    await this.activity.record(group, 'INSTALL', { nodeId: spare.id, hostname: spare.hostname }, message('autoscaling.installing', { providerId: providerIdOf(cluster, spare.id), batchId }), actor);
    await this.activity.record(group, 'DELETE', { nodeId, hostname: node.hostname }, text, actor);
    const task = this.removeMember(group, node, actor, { removal, targetLowered: false }).finally(() => this.removals.delete(task));
    this.removals.add(task);
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
        await this.activity.record(group, 'DELETE_FAILED', { nodeId: node.id, hostname: node.hostname }, message('autoscaling.removalEnded', { hostname: node.hostname, status: outcome.status.toLowerCase(), reason: outcome.reason ?? message('install.noReason') }));
        return;
      }
      if ((await this.nodes.get(node.id)).reinstallRequired) {
        await this.groups.setMember(node.id, { state: 'REINSTALL_REQUIRED', ...standing(message('autoscaling.member.leftAsItIs')) });
        await this.activity.record(group, 'REINSTALL_REQUIRED', { nodeId: node.id, hostname: node.hostname }, message('autoscaling.replacedReinstall', { hostname: node.hostname }), actor);
        return;
      }
      await this.returnToPool(group, node.id);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.logger.warn({ err: error, nodeId: node.id, group: group.name }, 'the removal of a group member failed');
      await keepMember(message('autoscaling.member.removalNotStarted', { error: detail })).catch(() => undefined);
      await this.activity.record(group, 'DELETE_FAILED', { nodeId: node.id, hostname: node.hostname }, message('autoscaling.removalNotRun', { hostname: node.hostname, error: detail })).catch(() => undefined);
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

  /** Runs `work` with the group locked (one transaction); NOT_FOUND for cluster-autoscaler when there is no such group. */
  private async lockGroup<T>(clusterId: string, name: string, work: (locked: LockedNodeGroup) => Promise<T>): Promise<T> {
    const done = await this.groups.withLockedGroup(clusterId, name, work);
    if (!done) {
      throw new AutoscalingRefusal('NOT_FOUND', message('autoscaling.refusal.groupNotFound', { name }));
    }
    return done.result;
  }
}
