import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn, VersionColumn } from 'typeorm';
import type { HardwareMinimums, RemediationHold, RemediationPolicy } from '@ccos/shared/domain';

/** How the cluster's bootstrapping kubelets authenticate their first (client) CSR. */
export type BootstrapStyle = 'OPENSHIFT' | 'KUBEADM';

@Entity({ name: 'clusters' })
export class ClusterEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'api_server_url', type: 'text' })
  apiServerUrl!: string;

  @Column({ type: 'text' })
  vip!: string;

  /** Sealed JSON `{ kubeconfig }` or `{ token, caCert }`; never leaves the service. */
  @Column({ name: 'credentials_sealed', type: 'text' })
  credentialsSealed!: string;

  @Column({ name: 'credential_kind', type: 'text' })
  credentialKind!: 'KUBECONFIG' | 'TOKEN';

  @Column({ name: 'csr_auto_approve', type: 'boolean', default: false })
  csrAutoApprove!: boolean;

  /** Whether the auto-approver approves serving-certificate renewals of nodes joined here (independent of csrAutoApprove). */
  @Column({ name: 'auto_approve_renewals', type: 'boolean', default: true })
  autoApproveRenewals!: boolean;

  @Column({ name: 'bootstrap_style', type: 'text', default: 'OPENSHIFT' })
  bootstrapStyle!: BootstrapStyle;

  /** Whether `http://` and a kubeconfig's `insecure-skip-tls-verify` are accepted for this cluster (set explicitly at registration). */
  @Column({ name: 'allow_insecure_transport', type: 'boolean', default: false })
  allowInsecureTransport!: boolean;

  /** The release whose artifact set installs use instead of the one the cluster reports; null follows the cluster. */
  @Column({ name: 'artifact_version', type: 'text', nullable: true })
  artifactVersion!: string | null;

  @Column({ name: 'machine_config_ca_cert', type: 'text', nullable: true })
  machineConfigCaCert!: string | null;

  /** When the readiness checks last ran; null before the first check. */
  @Column({ name: 'readiness_checked_at', type: 'timestamptz', nullable: true })
  readinessCheckedAt!: Date | null;

  /** The names of the checks that failed then (empty when all passed). */
  @Column({ name: 'readiness_failing', type: 'text', array: true, nullable: true })
  readinessFailing!: string[] | null;

  /** Installs that run at once on this cluster; more wait their turn in the order they were asked for. */
  @Column({ name: 'installs_at_once', type: 'integer', default: 50 })
  installsAtOnce!: number;

  /** Actions that cannot be undone or that pass a safety check wait for a second person's approval. */
  @Column({ name: 'four_eyes', type: 'boolean', default: false })
  fourEyes!: boolean;

  /** What every host added to it must have at least (checked when it is added, each failed check named); null asks nothing. */
  @Column({ name: 'host_minimums', type: 'jsonb', nullable: true })
  hostMinimums!: HardwareMinimums | null;

  /** Its remediation policy; null: off. */
  @Column({ name: 'remediation_policy', type: 'jsonb', nullable: true })
  remediationPolicy!: RemediationPolicy | null;

  /** Set while the cap holds remediation: how many members were unhealthy, of how many, the cap, since when (ISO 8601). */
  @Column({ name: 'remediation_held', type: 'jsonb', nullable: true })
  remediationHeld!: (RemediationHold & { readonly since: string }) | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @VersionColumn({ type: 'integer' })
  version!: number;
}
