import { Field, GraphQLISODateTime, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { RolloutEntity, RolloutNodeEntity } from '@ccos/api/data-access-db';
import { DisruptionBudgetPreviewType, DrainPodCountsType, KubectlLineType, MessageCodeField, MessageParamsField, codedFields, drainPlanSummary, enumOf } from '@ccos/api/util-graphql';
import { ROLLOUT_KINDS, ROLLOUT_NODE_PHASES, ROLLOUT_STATUSES, type RolloutKind, type RolloutNodePhase, type RolloutStatus } from '@ccos/shared/domain';
import type { RolloutPreview } from './rollout-conductor';

export const RolloutKindEnum = enumOf(ROLLOUT_KINDS);
registerEnumType(RolloutKindEnum, {
  name: 'RolloutKind',
  description: 'What a rollout does to each node between its drain and its uncordon.',
  valuesConfig: {
    REBOOT: { description: 'Reboot over SSH, then wait for the new boot, the kubelet and Ready.' },
    UPGRADE: { description: 'Bring the host to the cluster\'s artifact set: the agent re-runs the steps that lay down the set (keeping what already matches) and those that wrote a drifted file, then restarts kubelet. Takes, unless nodes are named, those on an older set or drifted.' },
    REAPPLY: { description: 'Restore the files found drifted: the agent re-runs the steps that wrote them, then restarts kubelet. Takes, unless nodes are named, those drifted on the cluster\'s set.' },
  },
});
export const RolloutStatusEnum = enumOf(ROLLOUT_STATUSES);
registerEnumType(RolloutStatusEnum, {
  name: 'RolloutStatus',
  description: 'RUNNING starts nodes as the budget and window allow; PAUSED starts nothing (an operator, a PodDisruptionBudget that refuses, a node that failed: see reason); SUCCEEDED every node done; CANCELLED.',
});
export const RolloutNodePhaseEnum = enumOf(ROLLOUT_NODE_PHASES);
registerEnumType(RolloutNodePhaseEnum, { name: 'RolloutNodePhase', description: 'PENDING, then DRAIN (cordoned first), APPLY (UPGRADE, REAPPLY) or REBOOT, WAIT_READY, UNCORDON, DONE; SKIPPED when cancelled while draining.' });

@ObjectType('MaintenanceWindow', { simpleResolvers: true, description: 'New nodes start only from each time the cron expression fires, in the time zone, for durationMinutes.' })
export class MaintenanceWindowType {
  @Field(() => String)
  cron!: string;

  @Field(() => Int)
  durationMinutes!: number;

  @Field(() => String)
  timeZone!: string;
}

@ObjectType('RolloutNode', { simpleResolvers: true })
export class RolloutNodeType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => String, { description: 'The Node\'s name.' })
  nodeName!: string;

  @Field(() => RolloutNodePhaseEnum)
  phase!: RolloutNodePhase;

  @Field(() => GraphQLISODateTime, { nullable: true })
  startedAt!: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When the reboot was asked for.' })
  rebootedAt!: Date | null;

  @Field(() => ID, { nullable: true, description: 'The agent\'s apply run on this node (UPGRADE, REAPPLY): its steps and events are the node\'s installRuns.' })
  applyRunId!: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why this node holds the rollout.' })
  problem!: string | null;

  @MessageCodeField('problem')
  problemCode!: string | null;

  @MessageParamsField('problem')
  problemParams!: Record<string, unknown> | null;
}

@ObjectType('Rollout', { simpleResolvers: true, description: 'A rolling operation over some of a cluster\'s nodes, never more unavailable at once than its budget.' })
export class RolloutType {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  clusterId!: string;

  @Field(() => RolloutKindEnum)
  kind!: RolloutKind;

  @Field(() => RolloutStatusEnum)
  status!: RolloutStatus;

  @Field(() => Int)
  maxUnavailable!: number;

  @Field(() => Boolean)
  maxUnavailableIsPercent!: boolean;

  @Field(() => MaintenanceWindowType, { nullable: true })
  maintenanceWindow!: MaintenanceWindowType | null;

  @Field(() => [String], { description: 'Alert names that pause it while they fire.' })
  pauseOnAlerts!: string[];

  @Field(() => Int)
  drainTimeoutSeconds!: number;

  @Field(() => Int)
  readyTimeoutSeconds!: number;

  @Field(() => String, { nullable: true, description: 'Why it is paused, was cancelled or ended.' })
  reason!: string | null;

  @MessageCodeField('reason')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'What a running rollout waits for now: the maintenance window, or the budget (naming the unavailable nodes).' })
  waitingFor!: string | null;

  @MessageCodeField('waitingFor')
  waitingForCode!: string | null;

  @MessageParamsField('waitingFor')
  waitingForParams!: Record<string, unknown> | null;

  @Field(() => String)
  createdBy!: string;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt!: Date;

  @Field(() => GraphQLISODateTime, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => [RolloutNodeType], { description: 'Its nodes, in the order they start.' })
  nodes!: RolloutNodeType[];
}

export function toRolloutType(rollout: RolloutEntity, nodes: readonly RolloutNodeEntity[]): RolloutType {
  return {
    id: rollout.id,
    clusterId: rollout.clusterId,
    kind: rollout.kind,
    status: rollout.status,
    maxUnavailable: rollout.maxUnavailable,
    maxUnavailableIsPercent: rollout.maxUnavailableIsPercent,
    maintenanceWindow: rollout.maintenanceWindow ? { ...rollout.maintenanceWindow } : null,
    pauseOnAlerts: [...rollout.pauseOnAlerts],
    drainTimeoutSeconds: rollout.drainTimeoutSeconds,
    readyTimeoutSeconds: rollout.readyTimeoutSeconds,
    reason: rollout.reason?.message ?? null,
    ...codedFields('reason', rollout.reason),
    waitingFor: rollout.waitingFor?.message ?? null,
    ...codedFields('waitingFor', rollout.waitingFor),
    createdBy: rollout.createdBy,
    createdAt: rollout.createdAt,
    updatedAt: rollout.updatedAt,
    finishedAt: rollout.finishedAt,
    nodes: nodes.map((node) => ({
      nodeId: node.nodeId,
      nodeName: node.nodeName,
      phase: node.phase,
      startedAt: node.startedAt,
      rebootedAt: node.rebootedAt,
      applyRunId: node.applyRunId,
      finishedAt: node.finishedAt,
      problem: node.problem?.message ?? null,
      ...codedFields('problem', node.problem),
    })),
  };
}

@ObjectType('RolloutNodePreview', { simpleResolvers: true, description: 'A node of the rollout asked for, and what its drain would do now (as kubectl drain --ignore-daemonsets --delete-emptydir-data).' })
export class RolloutNodePreviewType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => String)
  nodeName!: string;

  @Field(() => Boolean)
  ready!: boolean;

  @Field(() => Boolean)
  unschedulable!: boolean;

  @Field(() => Boolean, { description: 'Its drain would not be refused (a pod no controller would replace refuses it: the rollout would pause there).' })
  drainAllowed!: boolean;

  @Field(() => DrainPodCountsType)
  counts!: DrainPodCountsType;

  @Field(() => [KubectlLineType], { description: 'kubectl\'s refusal lines, with their message codes.' })
  refusalLines!: KubectlLineType[];

  @Field(() => [DisruptionBudgetPreviewType], { description: 'The PodDisruptionBudgets its drain meets; one that blocks pauses the rollout there until it allows a disruption.' })
  budgets!: DisruptionBudgetPreviewType[];
}

@ObjectType('RolloutPreview', { simpleResolvers: true, description: 'What startRollout with the same input would do now. Changes nothing.' })
export class RolloutPreviewType {
  @Field(() => [RolloutNodePreviewType], { description: 'The nodes in the order they would start.' })
  nodes!: RolloutNodePreviewType[];

  @Field(() => Int, { description: 'The budget as a count of nodes.' })
  allowed!: number;

  @Field(() => Boolean, { nullable: true, description: 'Whether the maintenance window is open now; null without one.' })
  windowOpen!: boolean | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When it closes (open) or opens (closed).' })
  windowChangesAt!: Date | null;

  @Field(() => [String], { description: 'Of pauseOnAlerts, those firing now: the rollout would pause before its first node.' })
  firingAlerts!: string[];

  @Field(() => String, { nullable: true, description: 'Why Alertmanager could not tell.' })
  alertProblem!: string | null;

  @MessageCodeField('alertProblem')
  alertProblemCode!: string | null;

  @MessageParamsField('alertProblem')
  alertProblemParams!: Record<string, unknown> | null;
}

export function toRolloutPreviewType(preview: RolloutPreview): RolloutPreviewType {
  return {
    nodes: preview.nodes.map((node) => ({ nodeId: node.nodeId, nodeName: node.nodeName, ready: node.ready, unschedulable: node.unschedulable, drainAllowed: node.drain.allowed, ...drainPlanSummary(node.drain) })),
    allowed: preview.allowed,
    windowOpen: preview.window?.open ?? null,
    windowChangesAt: preview.window?.changesAt ?? null,
    firingAlerts: [...preview.firingAlerts],
    alertProblem: preview.alertProblem?.message ?? null,
    ...codedFields('alertProblem', preview.alertProblem),
  };
}
