import { Field, Float, GraphQLISODateTime, ID, Int, ObjectType } from 'type-graphql';
import { LabelType, NodeStatusEnum, TaintType, MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';
import type { NodeStatus } from '@ccos/shared/domain';

@ObjectType('NodeGroupProfile')
export class NodeGroupProfileType {
  @Field(() => Float)
  cpuCores!: number;

  @Field(() => Float)
  memoryBytes!: number;

  @Field(() => Float)
  ephemeralStorageBytes!: number;

  @Field(() => Int)
  maxPods!: number;

  @Field(() => String)
  arch!: string;
}

@ObjectType('NodeGroupHost', { description: 'A host of a node group\'s pool and where it stands.' })
export class NodeGroupHostType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => String)
  hostname!: string;

  @Field(() => String, { nullable: true })
  ip!: string | null;

  @Field(() => String, { description: 'CHECKING, SPARE, RESERVED, RUNNING, DELETING, REINSTALL_REQUIRED or UNUSABLE' })
  state!: string;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @MessageCodeField('reason', '; null for reasons from before codes')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => NodeStatusEnum)
  nodeStatus!: NodeStatus;

  @Field(() => String, { nullable: true, description: 'ccos://<cluster>/<node id>, once a scale-up picked the host.' })
  providerId!: string | null;

  @Field(() => GraphQLISODateTime)
  since!: Date;
}

@ObjectType('AutoscalingActivity', { description: 'One decision of a node group: reserve, install, delete, return to pool, reinstall required, ...' })
export class AutoscalingActivityType {
  @Field(() => ID)
  seq!: string;

  @Field(() => String)
  kind!: string;

  @Field(() => ID, { nullable: true })
  nodeId!: string | null;

  @Field(() => String, { nullable: true })
  hostname!: string | null;

  @Field(() => String)
  reason!: string;

  @MessageCodeField('reason', '; null for decisions from before codes')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => String)
  actor!: string;

  @Field(() => GraphQLISODateTime)
  at!: Date;
}

@ObjectType('NodeGroup')
export class NodeGroupType {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  clusterId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => Int)
  minSize!: number;

  @Field(() => Int)
  maxSize!: number;

  @Field(() => Int, { description: 'What cluster-autoscaler asked for.' })
  targetSize!: number;

  @Field(() => Int, { description: 'Hosts installing, running or being deleted.' })
  currentSize!: number;

  @Field(() => Int, { description: 'Spares checked, clean and waiting.' })
  spares!: number;

  @Field(() => [LabelType])
  labels!: LabelType[];

  @Field(() => [TaintType])
  taints!: TaintType[];

  @Field(() => NodeGroupProfileType)
  profile!: NodeGroupProfileType;

  @Field(() => [NodeGroupHostType])
  hosts!: NodeGroupHostType[];

  @Field(() => [AutoscalingActivityType], { description: 'The latest decisions, newest first.' })
  activity!: AutoscalingActivityType[];

  @Field(() => String)
  createdBy!: string;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;
}

@ObjectType('AutoscalerConnection', {
  description:
    'What cluster-autoscaler --cloud-provider=externalgrpc needs: a client certificate (issued now, for this cluster only; the key is shown this once and never stored), the CA of the provider\'s server certificate, and the cloud-config naming them.',
})
export class AutoscalerConnectionType {
  @Field(() => String, { description: 'host:port of the gRPC provider as the autoscaler should dial it.' })
  address!: string;

  @Field(() => String)
  caCertificate!: string;

  @Field(() => String)
  clientCertificate!: string;

  @Field(() => String, { description: 'PEM private key of the client certificate. Shown once; store it as a Secret in the autoscaler\'s namespace.' })
  clientKey!: string;

  @Field(() => String, { description: 'The --cloud-config file, with the paths the Deployment in deploy/ mounts the three files at.' })
  cloudConfig!: string;
}
