import type { Logger } from 'pino';
import type { AutoscalingActivityKind, NodeEntity, NodeGroupEntity, NodeGroupMemberState, NodeGroupStore, NodeStore } from '@ccos/api/data-access-db';
import { type EventBus, followNodeChanges } from '@ccos/api/util-graphql';
import { failedHardwareValidations } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';
import type { AutoscalingPorts } from './autoscaling-ports';
import type { GroupActivityLog } from './group-activity-log';
import { AUTOSCALER_ACTOR, CHECK_FAILED, SERVICE_ACTOR, UNAME_ARCH, leftoversOf, standing } from './node-group-model';

/**
 * Moves each group member along what its node record says: a spare's checks ended (ready,
 * unusable, dirty, or its own install's files to clean first), a reserved host joined or failed
 * its install, a running member left the cluster. Follows the node changes of every cluster with
 * a group, and settles on start what changed while the service was down.
 */
export class MemberReconciler {
  private readonly followed = new Map<string, AsyncIterator<unknown>>();
  private readonly cleaning = new Set<string>();
  private stopped = false;

  constructor(
    private readonly groups: NodeGroupStore,
    private readonly nodes: NodeStore,
    private readonly ports: Pick<AutoscalingPorts, 'cleanLeftovers'>,
    private readonly activity: GroupActivityLog,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const groups = await this.groups.allGroups();
    for (const clusterId of new Set(groups.map((group) => group.clusterId))) {
      this.follow(clusterId);
    }
    await this.reconcileAll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.followed.values()].map((iterator) => iterator.return?.()));
    this.followed.clear();
  }

  /** Node changes of the cluster move its members along from now on (once per cluster). */
  follow(clusterId: string): void {
    if (this.followed.has(clusterId) || this.stopped) {
      return;
    }
    const iterator = followNodeChanges(
      this.events,
      clusterId,
      (change) => this.reconcileNode(change.nodeId).catch((error: unknown) => this.logger.warn({ err: error, nodeId: change.nodeId }, 'could not follow a node group member')),
      {
        stopped: () => this.stopped,
        failed: (error) => {
          this.followed.delete(clusterId);
          this.logger.warn({ err: error, clusterId }, 'stopped following node changes for node groups');
        },
      },
    );
    this.followed.set(clusterId, iterator);
  }

  /** Every state change a node event may have caused, for every group (Refresh, start). */
  async reconcileAll(): Promise<void> {
    const open = await this.groups.memberNodeIdsIn(['CHECKING', 'SPARE', 'RESERVED', 'RUNNING']);
    for (const nodeId of open) {
      await this.reconcileNode(nodeId);
    }
  }

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
          await this.activity.record(group, kind, { nodeId, hostname: node.hostname }, reason, SERVICE_ACTOR);
        } else {
          this.activity.changed(group);
        }
      }
    };
    if (member.state === 'CHECKING') {
      if (node.status === 'READY_TO_INSTALL') {
        const verdict = node.hostVerdict;
        const wanted = UNAME_ARCH[group.profile.arch];
        const below = failedHardwareValidations(node.facts.hardware, { cpus: group.profile.cpuCores, memoryBytes: group.profile.memoryBytes, diskBytes: group.profile.ephemeralStorageBytes });
        if (node.facts.arch && wanted && node.facts.arch !== wanted) {
          await move('CHECKING', 'UNUSABLE', message('autoscaling.member.wrongArch', { arch: node.facts.arch, group: group.name, wanted: group.profile.arch }), 'SPARE_UNUSABLE');
        } else if (below.length > 0) {
          // The group's profile is what cluster-autoscaler is told each new node brings: a smaller host would break its plan.
          await move('CHECKING', 'UNUSABLE', message('autoscaling.member.belowProfile', { group: group.name, validations: below.map((failed) => failed.text).join('; ') }), 'SPARE_UNUSABLE');
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
          await this.activity.record(group, 'INSTALL_FAILED', { nodeId, hostname: node.hostname }, message('autoscaling.installFailed', { hostname: node.hostname, reason: node.statusReasonCoded ?? node.statusReason ?? '' }), SERVICE_ACTOR);
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
        await this.activity.record(group, 'REINSTALL_REQUIRED', { nodeId: node.id, hostname: node.hostname }, message('autoscaling.cleanupFailed', { error: detail }), SERVICE_ACTOR);
      }
    } finally {
      this.cleaning.delete(node.id);
    }
  }
}
