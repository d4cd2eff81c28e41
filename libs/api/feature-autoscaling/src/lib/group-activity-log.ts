import type { Logger } from 'pino';
import type { AuditLog, AutoscalingActivityKind, NodeGroupEntity, NodeGroupStore } from '@ccos/api/data-access-db';
import { type AutoscalingActivityPayload, type EventBus, TOPICS } from '@ccos/api/util-graphql';
import { bare, type CodedText } from '@ccos/shared/messages';
import type { AutoscalingObserver } from './autoscaling-ports';
import { AUTOSCALER_ACTOR } from './node-group-model';

/** Every autoscaling decision: stored as the group's activity, audited, counted, logged and published. */
export class GroupActivityLog {
  constructor(
    private readonly groups: NodeGroupStore,
    private readonly audit: AuditLog,
    private readonly events: EventBus,
    private readonly logger: Logger,
    private readonly observer: AutoscalingObserver | null,
  ) {}

  async record(group: NodeGroupEntity, kind: AutoscalingActivityKind, about: { nodeId?: string; hostname?: string }, why: CodedText, actor = AUTOSCALER_ACTOR): Promise<void> {
    const reasonCoded = bare(why);
    const saved = await this.groups.recordActivity({ groupId: group.id, kind, nodeId: about.nodeId ?? null, hostname: about.hostname ?? null, reason: why.message, reasonCoded, actor });
    await this.audit.record({
      actor,
      action: `autoscaling.${kind.toLowerCase()}`,
      targetType: about.nodeId ? 'node' : 'nodeGroup',
      targetId: about.nodeId ?? group.id,
      result: 'SUCCESS',
      detail: { group: group.name, groupId: group.id, reason: why.message, reasonCode: reasonCoded.code, reasonParams: reasonCoded.params },
      requestId: null,
    });
    this.observer?.decision(kind, group.name);
    this.logger.info({ group: group.name, kind, nodeId: about.nodeId, hostname: about.hostname }, why.message);
    this.changed(group, saved.seq, kind);
  }

  /** Tells the group's subscribers something changed: a decision (its seq and kind), or a member's standing (both null). */
  changed(group: NodeGroupEntity, seq: string | null = null, kind: string | null = null): void {
    const payload: AutoscalingActivityPayload = { groupId: group.id, seq, kind };
    this.events.publish(TOPICS.AUTOSCALING_ACTIVITY, group.clusterId, payload);
  }
}
