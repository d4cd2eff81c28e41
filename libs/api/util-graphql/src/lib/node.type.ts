import { Field, GraphQLISODateTime, ID, Int, ObjectType } from 'type-graphql';
import type { HostManifestState, NodeAction, NodeOrigin, NodeStatus } from '@ccos/shared/domain';
import { HostManifestStateEnum, NodeActionEnum, NodeOriginEnum, NodeStatusEnum } from './enums';
import { HostVerdictType } from './host-verdict.type';
import { LabelType, TaintType } from './label-types';
import { MessageCodeField, MessageParamsField } from './message-code-fields';
import { NodeHealthType, NodeRemediationType } from './node-health.type';

@ObjectType('HostDisk', { simpleResolvers: true, description: 'A block device of the host (partitions, loop, RAM and optical devices left out).' })
export class HostDiskType {
  @Field(() => String)
  name!: string;

  @Field(() => Number)
  sizeBytes!: number;

  @Field(() => Boolean, { nullable: true, description: 'True for a spinning disk, false for an SSD or NVMe; null when the kernel does not say.' })
  rotational!: boolean | null;
}

@ObjectType('HostNic', { simpleResolvers: true, description: 'A network interface of the host (the loopback left out).' })
export class HostNicType {
  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true })
  mac!: string | null;

  @Field(() => String, { description: 'The kernel\'s operstate: up, down, unknown, …' })
  state!: string;
}

@ObjectType('HardwareChange', { simpleResolvers: true, description: 'One thing that differed between two inspections of a host.' })
export class HardwareChangeType {
  @Field(() => String, { description: 'cpus, cpuModel, memoryBytes, disk, nic, system, osRelease or kernel.' })
  field!: string;

  @Field(() => String, { nullable: true, description: 'The disk or NIC; null for the host\'s own fields.' })
  item!: string | null;

  @Field(() => String, { nullable: true, description: 'As it was; null when it was not there.' })
  before!: string | null;

  @Field(() => String, { nullable: true, description: 'As it is now; null when it is gone.' })
  after!: string | null;
}

@ObjectType('HostFacts', { simpleResolvers: true, description: 'What the service found on the host when it connected, or when it was last inspected again (reinspectHost).' })
export class HostFactsType {
  @Field(() => String, { nullable: true })
  arch!: string | null;

  @Field(() => String, { nullable: true })
  osRelease!: string | null;

  @Field(() => String, { nullable: true })
  kernel!: string | null;

  @Field(() => Number, { nullable: true, description: 'Free bytes in the agent folder.' })
  freeDiskBytes!: number | null;

  @Field(() => Int, { nullable: true, description: 'Online CPUs.' })
  cpus!: number | null;

  @Field(() => String, { nullable: true })
  cpuModel!: string | null;

  @Field(() => Number, { nullable: true, description: 'MemTotal of /proc/meminfo, in bytes.' })
  memoryBytes!: number | null;

  @Field(() => [HostDiskType])
  disks!: HostDiskType[];

  @Field(() => [HostNicType])
  nics!: HostNicType[];

  @Field(() => String, { nullable: true, description: 'DMI sys_vendor.' })
  systemVendor!: string | null;

  @Field(() => String, { nullable: true, description: 'DMI product_name.' })
  systemProduct!: string | null;

  @Field(() => String, { nullable: true, description: 'DMI product_serial (readable when the service connects as root or with sudo).' })
  systemSerial!: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When the host was last inspected again; null when only its add read it.' })
  inspectedAt!: Date | null;

  @Field(() => [HardwareChangeType], { description: 'What that inspection found changed since the reading before (empty: nothing changed, or never inspected again).' })
  changes!: HardwareChangeType[];
}

/** A worker node: one the service added, or one it found in the cluster. Credentials are never exposed. */
// simpleResolvers (here and on the types listed with it: labels, taints, facts, verdicts, step and
// removal events): plain data fields resolve as GraphQL's default does, without type-graphql's
// global middlewares, which act only on root fields (audit: mutations; input guard: arguments,
// which plain fields have none of) but made every field a promise: `nodes` at 5,000 nodes spent
// seconds on that alone. Fields that need a check belong in a resolver (@FieldResolver), never here.
@ObjectType('Node', { simpleResolvers: true })
export class NodeType {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  clusterId!: string;

  @Field(() => String)
  hostname!: string;

  @Field(() => String, { nullable: true })
  ip!: string | null;

  @Field(() => Int)
  sshPort!: number;

  @Field(() => String, { nullable: true })
  sshUser!: string | null;

  @Field(() => String, { nullable: true, description: 'PASSWORD or PRIVATE_KEY; null for discovered nodes.' })
  sshAuthMethod!: string | null;

  @Field(() => String, { nullable: true, description: 'The pinned SSH host key (SHA256:…), trusted on first use.' })
  hostKeyFingerprint!: string | null;

  @Field(() => String, { nullable: true, description: 'A different key the host presented; accept it with acceptHostKey once you trust it.' })
  offeredHostKeyFingerprint!: string | null;

  @Field(() => [LabelType])
  labels!: LabelType[];

  @Field(() => [TaintType])
  taints!: TaintType[];

  @Field(() => NodeStatusEnum)
  status!: NodeStatus;

  @Field(() => String, { nullable: true, description: 'Why the node is in its status, in words.' })
  statusReason!: string | null;

  @MessageCodeField('statusReason')
  statusReasonCode!: string | null;

  @MessageParamsField('statusReason')
  statusReasonParams!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'What to try next, for failure statuses.' })
  nextStep!: string | null;

  @MessageCodeField('nextStep')
  nextStepCode!: string | null;

  @MessageParamsField('nextStep')
  nextStepParams!: Record<string, unknown> | null;

  @Field(() => NodeOriginEnum)
  origin!: NodeOrigin;

  @Field(() => String)
  role!: string;

  @Field(() => Boolean, { description: 'The node has been part of the cluster; its record can then only be deleted once it is REMOVED.' })
  everJoined!: boolean;

  @Field(() => [NodeActionEnum], { description: 'The actions the node\'s state allows now, decided by the node lifecycle; the roles in NodeAction decide who may ask.' })
  availableActions!: NodeAction[];

  @Field(() => Boolean, { description: 'The Node object in the cluster is Ready.' })
  ready!: boolean;

  @Field(() => Boolean)
  unschedulable!: boolean;

  @Field(() => NodeHealthType, { nullable: true, description: 'Its health while it is a member of the cluster (JOINED, DRAIN_FAILED, REMOVING); null otherwise.' })
  health!: NodeHealthType | null;

  @Field(() => HostManifestStateEnum, {
    nullable: true,
    description: 'What the host runs against its install\'s record: CURRENT, DRIFTED, OUTDATED or UNINSPECTED (hostManifest has the files); null when no install recorded it.',
  })
  hostState!: HostManifestState | null;

  @Field(() => NodeRemediationType, { nullable: true, description: 'Its remediation in progress; null when none.' })
  remediation!: NodeRemediationType | null;

  @Field(() => String, { nullable: true, description: 'Why its host must be reinstalled before it serves again (a removal went on without the host); null when nothing says so.' })
  reinstallRequired!: string | null;

  @MessageCodeField('reinstallRequired')
  reinstallRequiredCode!: string | null;

  @MessageParamsField('reinstallRequired')
  reinstallRequiredParams!: Record<string, unknown> | null;

  @Field(() => HostFactsType)
  facts!: HostFactsType;

  @Field(() => String, { nullable: true, description: 'sha256 of the agent copied to the host.' })
  agentSha256!: string | null;

  @Field(() => ID, { nullable: true, description: 'The batch the node was added with (addNodes).' })
  batchId!: string | null;

  @Field(() => String, { nullable: true, description: 'Its phase in that batch: ADDED, QUEUED, ACTIVE, JOINED, FAILED, CANCELLED or HELD.' })
  batchPhase!: string | null;

  @Field(() => HostVerdictType, { nullable: true, description: 'What the add-time checks found of an earlier membership; an install needs CLEAN (or CLEANABLE after cleanHost).' })
  hostVerdict!: HostVerdictType | null;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt!: Date;
}
