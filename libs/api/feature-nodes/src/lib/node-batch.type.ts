import { Field, GraphQLISODateTime, ID, Int, ObjectType } from 'type-graphql';
import { HostVerdictType, LabelType, NodeStatusEnum, TaintType, MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';
import type { BatchPhase, BatchState, InstallStep, NodeStatus } from '@ccos/shared/domain';

@ObjectType('BulkRowProblem')
export class BulkRowProblemType {
  @Field(() => String, { description: 'row, hostname, ip, sshPort, sshUser, labels, taints or credentials' })
  field!: string;

  @Field(() => String)
  message!: string;

  @MessageCodeField('message')
  messageCode?: string | null;

  @MessageParamsField('message')
  messageParams?: Record<string, unknown> | null;
}

@ObjectType('BulkRowResult', { description: 'One row of a bulk add: what was read, its problems, and the node when it was added.' })
export class BulkRowResultType {
  @Field(() => Int, { description: 'Line of the list (or number in the range, or index of the rows), from 1.' })
  line!: number;

  @Field(() => String)
  hostname!: string;

  @Field(() => String)
  ip!: string;

  @Field(() => Int)
  sshPort!: number;

  @Field(() => String)
  sshUser!: string;

  @Field(() => [LabelType])
  labels!: LabelType[];

  @Field(() => [TaintType])
  taints!: TaintType[];

  @Field(() => [BulkRowProblemType])
  problems!: BulkRowProblemType[];

  @Field(() => ID, { nullable: true })
  nodeId!: string | null;
}

@ObjectType('BatchHost')
export class BatchHostType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => Int)
  position!: number;

  @Field(() => String)
  hostname!: string;

  @Field(() => String, { nullable: true })
  ip!: string | null;

  @Field(() => String, { description: 'ADDED, QUEUED, ACTIVE (installing), JOINED, FAILED, CANCELLED or HELD (waiting for an operator)' })
  phase!: BatchPhase;

  @Field(() => NodeStatusEnum)
  status!: NodeStatus;

  @Field(() => String, { nullable: true })
  statusReason!: string | null;

  @MessageCodeField('statusReason')
  statusReasonCode!: string | null;

  @MessageParamsField('statusReason')
  statusReasonParams!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'The step its install is at, while it installs.' })
  step!: InstallStep | null;

  @Field(() => [LabelType])
  labels!: LabelType[];

  @Field(() => [TaintType])
  taints!: TaintType[];

  @Field(() => HostVerdictType, { nullable: true })
  verdict!: HostVerdictType | null;
}

@ObjectType('BatchStepCount')
export class BatchStepCountType {
  @Field(() => String)
  step!: InstallStep;

  @Field(() => Int)
  hosts!: number;
}

@ObjectType('BatchFailure')
export class BatchFailureType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => String)
  hostname!: string;

  @Field(() => String)
  reason!: string;
}

@ObjectType('BatchProgress', { description: 'How a batch stands, counted over its hosts.' })
export class BatchProgressType {
  @Field(() => Int)
  total!: number;

  @Field(() => Int, { description: 'Added, no install asked for.' })
  added!: number;

  @Field(() => Int)
  queued!: number;

  @Field(() => Int)
  installing!: number;

  @Field(() => [BatchStepCountType], { description: 'Installing hosts by the step they are at.' })
  installingBySteps!: BatchStepCountType[];

  @Field(() => Int, { description: "Of the installing hosts, those waiting for one of the cluster's install slots (Cluster.installsAtOnce)." })
  waitingForSlot!: number;

  @Field(() => Int)
  joined!: number;

  @Field(() => Int)
  failed!: number;

  @Field(() => [BatchFailureType])
  failures!: BatchFailureType[];

  @Field(() => Int)
  cancelled!: number;

  @Field(() => Int)
  waitingForOperator!: number;
}

@ObjectType('NodeBatch', { description: 'The hosts of one bulk add.' })
export class NodeBatchType {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  clusterId!: string;

  @Field(() => String, { description: 'ADDED, INSTALLING, FINISHED or NEEDS_ATTENTION' })
  state!: BatchState;

  @Field(() => Int)
  concurrency!: number;

  @Field(() => String)
  createdBy!: string;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => GraphQLISODateTime, { nullable: true })
  installRequestedAt!: Date | null;

  @Field(() => BatchProgressType)
  progress!: BatchProgressType;

  @Field(() => [BatchHostType])
  hosts!: BatchHostType[];
}

@ObjectType('AddNodesResult')
export class AddNodesResultType {
  @Field(() => NodeBatchType, { nullable: true, description: 'The batch of the added hosts; null when nothing was added.' })
  batch!: NodeBatchType | null;

  @Field(() => [BulkRowResultType], { description: 'Every row, in order, with its problems.' })
  rows!: BulkRowResultType[];

  @Field(() => Int)
  added!: number;

  @Field(() => Int, { description: 'Rows with at least one problem.' })
  refused!: number;

  @Field(() => [BulkRowProblemType], { description: 'Problems of the request as a whole (a range that cannot be read, missing credentials).' })
  problems!: BulkRowProblemType[];
}
