import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import type { RolloutKind, RolloutNodePhase, RolloutStatus } from '@ccos/shared/domain';
import type { CodedText } from '@ccos/shared/messages';

/** When new nodes of a rollout may start: from each time the cron expression fires (in the time zone), for so many minutes. */
export interface MaintenanceWindow {
  readonly cron: string;
  readonly durationMinutes: number;
  /** An IANA time zone (`Asia/Shanghai`, `UTC`). */
  readonly timeZone: string;
}

/** A rolling operation over some of a cluster's nodes. */
@Entity({ name: 'rollouts' })
export class RolloutEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'cluster_id', type: 'uuid' })
  clusterId!: string;

  @Column({ type: 'text' })
  kind!: RolloutKind;

  @Column({ type: 'text' })
  status!: RolloutStatus;

  @Column({ name: 'max_unavailable', type: 'integer' })
  maxUnavailable!: number;

  @Column({ name: 'max_unavailable_is_percent', type: 'boolean', default: false })
  maxUnavailableIsPercent!: boolean;

  @Column({ name: 'maintenance_window', type: 'jsonb', nullable: true })
  maintenanceWindow!: MaintenanceWindow | null;

  /** Alert names: while Alertmanager says one of them fires, no new node starts (the rollout pauses, naming it). */
  @Column({ name: 'pause_on_alerts', type: 'jsonb', default: () => "'[]'::jsonb" })
  pauseOnAlerts!: string[];

  /** How long one node's drain may take before the rollout pauses on it. */
  @Column({ name: 'drain_timeout_seconds', type: 'integer' })
  drainTimeoutSeconds!: number;

  /** How long a rebooted node has to come back (new boot, kubelet active, Node Ready) before the rollout pauses on it. */
  @Column({ name: 'ready_timeout_seconds', type: 'integer' })
  readyTimeoutSeconds!: number;

  /** Why it paused, was cancelled or ended; null while it runs. */
  @Column({ type: 'jsonb', nullable: true })
  reason!: CodedText | null;

  /** What a running rollout waits for now (the window, the budget); null when it is starting nodes or has none left to start. */
  @Column({ name: 'waiting_for', type: 'jsonb', nullable: true })
  waitingFor!: CodedText | null;

  @Column({ name: 'created_by', type: 'text' })
  createdBy!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;
}

/** One node of a rollout, and how far it got. */
@Entity({ name: 'rollout_nodes' })
export class RolloutNodeEntity {
  @PrimaryColumn({ name: 'rollout_id', type: 'uuid' })
  rolloutId!: string;

  @PrimaryColumn({ name: 'node_id', type: 'uuid' })
  nodeId!: string;

  /** The order nodes start in. */
  @Column({ type: 'integer' })
  position!: number;

  /** The Node's name in the cluster. */
  @Column({ name: 'node_name', type: 'text' })
  nodeName!: string;

  @Column({ type: 'text', default: 'PENDING' })
  phase!: RolloutNodePhase;

  /** The host's boot id before the rollout rebooted it: a different one says the reboot happened (also after a restart of the service). */
  @Column({ name: 'boot_id_before', type: 'text', nullable: true })
  bootIdBefore!: string | null;

  @Column({ name: 'rebooted_at', type: 'timestamptz', nullable: true })
  rebootedAt!: Date | null;

  /** The apply run of an UPGRADE or REAPPLY on this node (the latest, when one failed and was tried again). */
  @Column({ name: 'apply_run_id', type: 'uuid', nullable: true })
  applyRunId!: string | null;

  /** Why the node holds the rollout (a budget, a deadline, an unreachable host); null when nothing does. */
  @Column({ type: 'jsonb', nullable: true })
  problem!: CodedText | null;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;
}
