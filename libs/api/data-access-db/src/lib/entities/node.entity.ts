import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn, VersionColumn } from 'typeorm';
import type { BatchPhase, HardwareChange, HardwareFacts, HostHealthCheck, HostVerdict, Label, NodeOrigin, NodeRemediation, NodeStatus, Taint } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';

/** What the installer service learned about the host when it connected. */
export interface HostFacts {
  arch?: string;
  osRelease?: string;
  kernel?: string;
  freeDiskBytes?: number;
  /** CPUs, memory, disks, NICs and the system's DMI names, as the host told them when it was added. */
  hardware?: HardwareFacts;
  /** /etc/machine-id, to recognise a host this service removed when it comes back. */
  machineId?: string;
  /** When an operator last had the host inspected again (ISO time); absent when it never was. */
  inspectedAt?: string;
  /** What that inspection found changed since the one before. */
  changes?: HardwareChange[];
}

@Entity({ name: 'nodes' })
export class NodeEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'cluster_id', type: 'uuid' })
  clusterId!: string;

  @Column({ type: 'text' })
  hostname!: string;

  @Column({ type: 'text', nullable: true })
  ip!: string | null;

  @Column({ name: 'ssh_port', type: 'integer', default: 22 })
  sshPort!: number;

  @Column({ name: 'ssh_user', type: 'text', nullable: true })
  sshUser!: string | null;

  /** Sealed JSON `{ password }` or `{ privateKey, passphrase? }`. */
  @Column({ name: 'ssh_credentials_sealed', type: 'text', nullable: true })
  sshCredentialsSealed!: string | null;

  @Column({ name: 'ssh_auth_method', type: 'text', nullable: true })
  sshAuthMethod!: 'PASSWORD' | 'PRIVATE_KEY' | null;

  @Column({ name: 'host_key_fingerprint', type: 'text', nullable: true })
  hostKeyFingerprint!: string | null;

  /** The pinned key's type (e.g. ssh-ed25519), so later connections ask for that type only. */
  @Column({ name: 'host_key_algorithm', type: 'text', nullable: true })
  hostKeyAlgorithm!: string | null;

  /** A key the host presented that differs from the pinned one, kept until an admin accepts or rejects it. */
  @Column({ name: 'offered_host_key_fingerprint', type: 'text', nullable: true })
  offeredHostKeyFingerprint!: string | null;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  labels!: Label[];

  @Column({ type: 'jsonb', default: () => "'[]'" })
  taints!: Taint[];

  @Column({ type: 'text' })
  status!: NodeStatus;

  @Column({ name: 'status_reason', type: 'text', nullable: true })
  statusReason!: string | null;

  /** `statusReason` by its message code and parameters (libs/shared/messages); null for text from before codes. */
  @Column({ name: 'status_reason_coded', type: 'jsonb', nullable: true })
  statusReasonCoded!: Message | null;

  @Column({ type: 'text', default: 'ADDED' })
  origin!: NodeOrigin;

  @Column({ type: 'text', default: 'worker' })
  role!: string;

  @Column({ type: 'boolean', default: false })
  ready!: boolean;

  @Column({ type: 'boolean', default: false })
  unschedulable!: boolean;

  /** Its Node's Ready condition as the cluster shows it; null while no Node has been seen. */
  @Column({ name: 'ready_status', type: 'text', nullable: true })
  readyStatus!: 'True' | 'False' | 'Unknown' | null;

  /** When that condition last changed. */
  @Column({ name: 'ready_since', type: 'timestamptz', nullable: true })
  readySince!: Date | null;

  /** The last check of its host over SSH (reachable, the kubelet unit active); null before one. */
  @Column({ name: 'host_health', type: 'jsonb', nullable: true })
  hostHealth!: HostHealthCheck | null;

  /** Its remediation in progress (the rung, its deadline); null when none. */
  @Column({ type: 'jsonb', nullable: true })
  remediation!: NodeRemediation | null;

  /** Why its host must be reinstalled before it serves again (a removal left it as it was); null when nothing says so. */
  @Column({ name: 'reinstall_required', type: 'jsonb', nullable: true })
  reinstallRequired!: Message | null;

  @Column({ name: 'ever_joined', type: 'boolean', default: false })
  everJoined!: boolean;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  facts!: HostFacts;

  @Column({ name: 'agent_sha256', type: 'text', nullable: true })
  agentSha256!: string | null;

  /** The batch this node was added with, if any. */
  @Column({ name: 'batch_id', type: 'uuid', nullable: true })
  batchId!: string | null;

  /** Its row in the batch (1-based), for a stable order. */
  @Column({ name: 'batch_position', type: 'integer', nullable: true })
  batchPosition!: number | null;

  @Column({ name: 'batch_phase', type: 'text', nullable: true })
  batchPhase!: BatchPhase | null;

  /** What the add-time checks found of an earlier membership; null before they ran. */
  @Column({ name: 'host_verdict', type: 'jsonb', nullable: true })
  hostVerdict!: HostVerdict | null;

  /** `ccos://<cluster>/<node id>`, given to kubelet at start, for nodes installed through a node group; null otherwise. */
  @Column({ name: 'provider_id', type: 'text', nullable: true })
  providerId!: string | null;

  /** The record that carried this host on after it returned to a node group's pool (set on REMOVED records only). */
  @Column({ name: 'successor_node_id', type: 'uuid', nullable: true })
  successorNodeId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @VersionColumn({ type: 'integer' })
  version!: number;
}
