import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { Label, Taint } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';

/** The hardware every host of a node group has, as the autoscaler's template Node shows it. */
export interface NodeGroupProfile {
  readonly cpuCores: number;
  readonly memoryBytes: number;
  readonly ephemeralStorageBytes: number;
  readonly maxPods: number;
  /** `kubernetes.io/arch`: amd64 or arm64. */
  readonly arch: string;
}

@Entity({ name: 'node_groups' })
export class NodeGroupEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'cluster_id', type: 'uuid' })
  clusterId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'min_size', type: 'integer' })
  minSize!: number;

  @Column({ name: 'max_size', type: 'integer' })
  maxSize!: number;

  @Column({ name: 'target_size', type: 'integer', default: 0 })
  targetSize!: number;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  labels!: Label[];

  @Column({ type: 'jsonb', default: () => "'[]'" })
  taints!: Taint[];

  @Column({ type: 'jsonb' })
  profile!: NodeGroupProfile;

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/**
 * Where a host of a group stands. CHECKING: addNode's checks run; SPARE: passed, clean, waiting;
 * RESERVED: picked by a scale-up, installing; RUNNING: joined; DELETING: a scale-down removes it;
 * RETIRED: this record ended (a successor record carries the host on, if it came back);
 * REINSTALL_REQUIRED: the dirty-host check did not say clean; UNUSABLE: the checks failed.
 */
export type NodeGroupMemberState = 'CHECKING' | 'SPARE' | 'RESERVED' | 'RUNNING' | 'DELETING' | 'RETIRED' | 'REINSTALL_REQUIRED' | 'UNUSABLE';

@Entity({ name: 'node_group_members' })
export class NodeGroupMemberEntity {
  @PrimaryColumn({ name: 'node_id', type: 'uuid' })
  nodeId!: string;

  @Column({ name: 'group_id', type: 'uuid' })
  groupId!: string;

  @Column({ type: 'text' })
  state!: NodeGroupMemberState;

  @Column({ type: 'text', nullable: true })
  reason!: string | null;

  /** `reason` by its message code and parameters (libs/shared/messages); null for text from before codes. */
  @Column({ name: 'reason_coded', type: 'jsonb', nullable: true })
  reasonCoded!: Message | null;

  /** The record this host had before it came back to the pool. */
  @Column({ name: 'predecessor_node_id', type: 'uuid', nullable: true })
  predecessorNodeId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

export type AutoscalingActivityKind =
  | 'SPARE_ADDED' | 'SPARE_READY' | 'SPARE_UNUSABLE' | 'RESERVE' | 'OUT_OF_RESOURCES' | 'INSTALL' | 'INSTALLED' | 'INSTALL_FAILED'
  | 'DECREASE_TARGET' | 'VICTIM_CHOSEN' | 'DELETE' | 'DELETE_FAILED' | 'RETURN_TO_POOL' | 'REINSTALL_REQUIRED';

@Entity({ name: 'autoscaling_activities' })
export class AutoscalingActivityEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  seq!: string;

  @Column({ name: 'group_id', type: 'uuid' })
  groupId!: string;

  @Column({ type: 'text' })
  kind!: AutoscalingActivityKind;

  @Column({ name: 'node_id', type: 'uuid', nullable: true })
  nodeId!: string | null;

  @Column({ type: 'text', nullable: true })
  hostname!: string | null;

  @Column({ type: 'text' })
  reason!: string;

  /** `reason` by its message code and parameters (libs/shared/messages); null for text from before codes. */
  @Column({ name: 'reason_coded', type: 'jsonb', nullable: true })
  reasonCoded!: Message | null;

  @Column({ type: 'text' })
  actor!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at!: Date;
}
