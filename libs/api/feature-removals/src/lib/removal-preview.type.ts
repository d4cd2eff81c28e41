import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { DisruptionBudgetPreviewType, DrainPodCountsType, KubectlLineType, MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';
import type { SafetyRule } from '@ccos/shared/domain';
import { type DrainActionName, DrainActionEnum, type DrainPodClassName, DrainPodClassEnum, type ForcefulDrainOptionName, ForcefulDrainOptionEnum, RemovalSafetyRuleEnum } from './removal.enums';

@ObjectType('RemovalSafetyCheck', { description: "One rule's verdict on the removal." })
export class SafetyCheckType {
  @Field(() => RemovalSafetyRuleEnum)
  rule!: SafetyRule;

  @Field(() => Boolean)
  passed!: boolean;

  @Field(() => Boolean, { description: 'A failed blocking check refuses the removal; a failed non-blocking one is a warning.' })
  blocking!: boolean;

  @Field(() => String)
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;
}

@ObjectType('DrainPodPreview', { description: 'A pod on the node and what the drain would do with it.' })
export class DrainPodPreviewType {
  @Field(() => String, { description: 'namespace/name' })
  pod!: string;

  @Field(() => String)
  namespace!: string;

  @Field(() => String)
  name!: string;

  @Field(() => DrainPodClassEnum)
  podClass!: DrainPodClassName;

  @Field(() => DrainActionEnum)
  action!: DrainActionName;

  @Field(() => String, { description: "kubectl's words for the decision, or what owns the pod." })
  reason!: string;

  @MessageCodeField('reason')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'Kind/name of the controller.' })
  controller!: string | null;

  @Field(() => [String], { description: 'PodDisruptionBudgets covering the pod.' })
  pdbs!: string[];

  @Field(() => [ForcefulDrainOptionEnum], {
    description:
      'The forceful options under which the drain deletes this pod, whatever the options asked about (both when it needs both): what ticking an option would delete, before it is ticked. Empty when the pod is evicted without them or kept whatever they say.',
  })
  deletedWith!: ForcefulDrainOptionName[];
}

@ObjectType('CapacityPreview', { description: 'Whether the evicted pods fit on the other schedulable Ready nodes (requests only; not a scheduler).' })
export class CapacityPreviewType {
  @Field(() => Boolean)
  fits!: boolean;

  @Field(() => String)
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;

  @Field(() => Int)
  requiredCpuMillicores!: number;

  @Field(() => Float)
  requiredMemoryBytes!: number;

  @Field(() => Int)
  requiredPods!: number;

  @Field(() => Int)
  availableCpuMillicores!: number;

  @Field(() => Float)
  availableMemoryBytes!: number;

  @Field(() => Int)
  availablePods!: number;

  @Field(() => [String], { description: 'Schedulable Ready nodes the pods may go to.' })
  candidates!: string[];

  @Field(() => [String], { description: 'Pods that fit on no candidate.' })
  unplaceable!: string[];

  @Field(() => [String], { description: 'Evicted pods without a controller: nobody recreates them.' })
  unmanaged!: string[];
}

@ObjectType('HostAccessPreview', { description: 'Whether the service can reach the host over SSH to stop its kubelet (and clean it).' })
export class HostAccessPreviewType {
  @Field(() => Boolean, { description: 'SSH credentials are recorded (nodes added here; discovered nodes have none).' })
  credentials!: boolean;

  @Field(() => Boolean, { nullable: true, description: 'A login succeeded just now; null when not tried.' })
  reachable!: boolean | null;

  @Field(() => String)
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;
}

@ObjectType('RemovalPreview', { description: 'Everything the console shows before an operator confirms a removal. Changes nothing.' })
export class RemovalPreviewType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => String)
  nodeName!: string;

  @Field(() => Boolean, { description: 'removeNode with these options would start, and its drain would not be refused.' })
  allowed!: boolean;

  @Field(() => String, { nullable: true, description: 'Why not, in words.' })
  refusal!: string | null;

  @MessageCodeField('refusal')
  refusalCode!: string | null;

  @MessageParamsField('refusal')
  refusalParams!: Record<string, unknown> | null;

  @Field(() => Boolean, { description: 'The Node object exists in the cluster.' })
  exists!: boolean;

  @Field(() => [String])
  roles!: string[];

  @Field(() => Boolean)
  ready!: boolean;

  @Field(() => String, { description: 'True, False or Unknown.' })
  readyStatus!: string;

  @Field(() => Boolean)
  unschedulable!: boolean;

  @Field(() => [SafetyCheckType])
  safety!: SafetyCheckType[];

  @Field(() => [DrainPodPreviewType])
  pods!: DrainPodPreviewType[];

  @Field(() => DrainPodCountsType)
  counts!: DrainPodCountsType;

  @Field(() => [String], { description: "kubectl's warning lines (ignoring DaemonSet-managed Pods: ...)." })
  warnings!: string[];

  @Field(() => [String], { description: "kubectl's refusal lines (cannot delete Pods ... (use --force to override): ...)." })
  refusals!: string[];

  @Field(() => [KubectlLineType], { description: 'warnings with their message codes.' })
  warningLines!: KubectlLineType[];

  @Field(() => [KubectlLineType], { description: 'refusals with their message codes.' })
  refusalLines!: KubectlLineType[];

  @Field(() => [DisruptionBudgetPreviewType])
  budgets!: DisruptionBudgetPreviewType[];

  @Field(() => CapacityPreviewType, { nullable: true, description: 'Null when the Node does not exist.' })
  capacity!: CapacityPreviewType | null;

  @Field(() => HostAccessPreviewType)
  host!: HostAccessPreviewType;
}
