import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, GraphQLISODateTime, ID, Int, ObjectType } from 'type-graphql';
import { MessageCodeField, MessageParamsField, NodeStatusEnum, RunEventType, RunType } from '@ccos/api/util-graphql';
import type { NodeStatus, RemovalEventKind, RemovalPhase, RemovalRunStatus } from '@ccos/shared/domain';
import { RemovalEventKindEnum, RemovalPhaseEnum, RemovalRunStatusEnum } from './removal.enums';

@ObjectType('RemovalOptions', { description: 'The options a run was started with.' })
export class RemovalOptionsType {
  @Field(() => Boolean)
  force!: boolean;

  @Field(() => Boolean)
  deleteEmptyDirData!: boolean;

  @Field(() => Boolean)
  ignoreDaemonSets!: boolean;

  @Field(() => Int)
  gracePeriodSeconds!: number;

  @Field(() => Int)
  timeoutSeconds!: number;

  @Field(() => Boolean)
  allowLastWorker!: boolean;

  @Field(() => Boolean)
  ungraceful!: boolean;

  @Field(() => Boolean)
  cleanHost!: boolean;
}

@ObjectType('BlockingPod', { description: 'A pod still on the node when the drain stopped, and why.' })
export class BlockingPodType {
  @Field(() => String, { description: 'namespace/name' })
  pod!: string;

  @Field(() => String, { nullable: true, description: 'The PodDisruptionBudget that refused its eviction.' })
  pdb!: string | null;

  @Field(() => String, { description: "The API's words (or kubectl's refusal)." })
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;
}

@ObjectType('RemovalDecision', { description: "An operator's decision that a removal goes on without its host (skipRemovalHostSide)." })
export class RemovalDecisionType {
  @Field(() => String)
  actor!: string;

  @Field(() => String)
  reason!: string;

  @Field(() => GraphQLISODateTime)
  at!: Date;
}

@ObjectType('RemovalEvent', { implements: RunEventType, simpleResolvers: true, description: 'One thing a removal run did or saw, in order (seq).' })
export class RemovalEventType extends RunEventType {
  @Field(() => RemovalEventKindEnum)
  kind!: RemovalEventKind;

  @Field(() => RemovalPhaseEnum, { description: 'The phase the run was in when this happened (DONE for the last event of a run that succeeded).' })
  phase!: RemovalPhase;

  @Field(() => String, { nullable: true, description: 'namespace/name, for pod events.' })
  pod!: string | null;

  @Field(() => String, { nullable: true, description: 'The PodDisruptionBudget involved (POD_BLOCKED).' })
  pdb!: string | null;

  @Field(() => String)
  override message!: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'E.g. the budget\'s "needs n healthy pods and has m" detail, CSR names, SSH output.' })
  override detail!: Record<string, unknown> | null;
}

@ObjectType('RemovalRun', { implements: RunType, description: 'One removal of a node: cordon, drain, stop the kubelet, delete the Node, deny CSRs, revoke tokens, clean the host.' })
export class RemovalRunType extends RunType {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => String, { description: 'The Node object\'s name.' })
  nodeName!: string;

  @Field(() => RemovalRunStatusEnum)
  status!: RemovalRunStatus;

  @Field(() => RemovalPhaseEnum, { description: 'The phase running now, or where the run stopped.' })
  phase!: RemovalPhase;

  @Field(() => RemovalOptionsType)
  options!: RemovalOptionsType;

  @Field(() => String, { nullable: true, description: 'Why the run failed or was cancelled; what it did when it succeeded.' })
  override reason!: string | null;

  @Field(() => [BlockingPodType], { description: 'Pods still on the node when the drain stopped.' })
  blocking!: BlockingPodType[];

  @Field(() => Boolean)
  cancelRequested!: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'What the run waits for now, e.g. "host 198.18.0.12 unreachable since 10:04:05" or a PodDisruptionBudget that allows no disruption; null while nothing holds it.',
  })
  blocker!: string | null;

  @MessageCodeField('blocker')
  blockerCode!: string | null;

  @MessageParamsField('blocker')
  blockerParams!: Record<string, unknown> | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'Since when the blocker holds the run.' })
  blockerSince!: Date | null;

  @Field(() => RemovalDecisionType, { nullable: true, description: 'Set once an operator had the run go on without its host; the node is then marked reinstall required.' })
  hostSkip!: RemovalDecisionType | null;

  @Field(() => RemovalDecisionType, { nullable: true, description: 'Set once an ADMIN had the drain go past the PodDisruptionBudgets that hold it (forceRemovalDrain): the pods they hold are deleted instead of evicted.' })
  forceDrain!: RemovalDecisionType | null;

  @Field(() => NodeStatusEnum, { description: "The node's status now." })
  nodeStatus!: NodeStatus;

  @Field(() => String, { nullable: true, description: "The node's status reason now (DRAIN_FAILED names the blocking pods and budgets)." })
  nodeStatusReason!: string | null;

  @MessageCodeField('nodeStatusReason')
  nodeStatusReasonCode!: string | null;

  @MessageParamsField('nodeStatusReason')
  nodeStatusReasonParams!: Record<string, unknown> | null;
}

@ObjectType('RemovalProgress', {
  description: 'The latest removal run of a node as it is now, with the events this subscriber has not seen: all of them in the first message, then the new ones.',
})
export class RemovalProgressType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => RemovalRunType, { nullable: true, description: 'Null while the node has no removal run.' })
  run!: RemovalRunType | null;

  @Field(() => [RemovalEventType])
  events!: RemovalEventType[];
}

@ObjectType('UncordonResult', { description: 'A node made schedulable again after a failed or cancelled removal.' })
export class UncordonResultType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => String)
  hostname!: string;

  @Field(() => NodeStatusEnum)
  status!: NodeStatus;

  @Field(() => Boolean, { description: 'Whether the Node was cordoned before (false: it already was schedulable).' })
  changed!: boolean;
}
