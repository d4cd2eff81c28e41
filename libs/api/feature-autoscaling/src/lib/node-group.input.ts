import { IsOptional, ValidateNested } from 'class-validator';
import { Field, Float, ID, InputType, Int } from 'type-graphql';
import { HostAccessInput, LabelInput, ROLE_LABEL_REASON_DESCRIPTION, TaintInput } from '@ccos/api/util-graphql';

@InputType({ description: 'The hardware every host of a node group has; the template Node cluster-autoscaler simulates with.' })
export class NodeGroupProfileInput {
  @Field(() => Float, { description: 'CPU cores (allocatable).' })
  cpuCores!: number;

  @Field(() => Float, { description: 'Memory in bytes (allocatable).' })
  memoryBytes!: number;

  @Field(() => Float, { defaultValue: 20 * 1024 ** 3, description: 'Ephemeral storage in bytes (allocatable).' })
  ephemeralStorageBytes!: number;

  @Field(() => Int, { defaultValue: 110 })
  maxPods!: number;

  @Field(() => String, { defaultValue: 'amd64', description: 'kubernetes.io/arch: amd64 or arm64.' })
  arch!: string;
}

@InputType({ description: 'A node group: spares with one hardware profile and one set of labels and taints, between min and max size.' })
export class CreateNodeGroupInput {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => String, { description: 'The id cluster-autoscaler knows the group by: 1..63 lower-case letters, digits and inner dashes, unique in the cluster.' })
  name!: string;

  @Field(() => Int, { defaultValue: 0 })
  minSize!: number;

  @Field(() => Int)
  maxSize!: number;

  @Field(() => [LabelInput], { defaultValue: [] })
  @ValidateNested({ each: true })
  labels!: LabelInput[];

  @Field(() => [TaintInput], { defaultValue: [] })
  @ValidateNested({ each: true })
  taints!: TaintInput[];

  @Field(() => String, { nullable: true, description: `${ROLE_LABEL_REASON_DESCRIPTION} Its spares carry the labels on this reason.` })
  @IsOptional()
  roleLabelReason?: string | null;

  @Field(() => NodeGroupProfileInput)
  @ValidateNested()
  profile!: NodeGroupProfileInput;
}

@InputType({ description: 'A host to add as a spare of a node group: it goes through addNode\'s checks and waits, not installed.' })
export class AddSpareInput extends HostAccessInput {
  @Field(() => ID)
  groupId!: string;
}
