import { Column, Entity } from 'typeorm';
import type { InstallRunPurpose, InstallRunStatus, InstallStep } from '@ccos/shared/domain';
import { RunColumns } from './run-columns';

/** How a run's agent reaches the service: HTTPS with the pin from its config, or plain HTTP (allowed explicitly). */
export type AgentChannel = 'HTTPS' | 'PLAIN_HTTP';

@Entity({ name: 'install_runs' })
export class InstallRunEntity extends RunColumns<InstallRunStatus> {
  /** sha256 of the one-run agent token; the token itself is never stored. */
  @Column({ name: 'agent_token_hash', type: 'text', nullable: true })
  agentTokenHash!: string | null;

  /** The agent token works until then: the run's deadline, or shortly after the run ended. */
  @Column({ name: 'agent_token_expires_at', type: 'timestamptz', nullable: true })
  agentTokenExpiresAt!: Date | null;

  /** A run still RUNNING at its deadline is ended; its agent token and bootstrap identity end with it. */
  @Column({ name: 'deadline_at', type: 'timestamptz', nullable: true })
  deadlineAt!: Date | null;

  /** The user name of the bootstrap identity minted for this run (`system:serviceaccount:<ns>:<name>`); its token went only to the host. */
  @Column({ name: 'bootstrap_identity', type: 'text', nullable: true })
  bootstrapIdentity!: string | null;

  @Column({ name: 'bootstrap_identity_uid', type: 'text', nullable: true })
  bootstrapIdentityUid!: string | null;

  @Column({ name: 'bootstrap_identity_expires_at', type: 'timestamptz', nullable: true })
  bootstrapIdentityExpiresAt!: Date | null;

  /** When the identity was deleted from the cluster; null while it may still authenticate. */
  @Column({ name: 'bootstrap_identity_revoked_at', type: 'timestamptz', nullable: true })
  bootstrapIdentityRevokedAt!: Date | null;

  /** The step this run starts at: PREFLIGHT for a first run, the first unfinished step for a retry. */
  @Column({ name: 'start_step', type: 'text', default: 'PREFLIGHT' })
  startStep!: InstallStep;

  /** INSTALL, or APPLY: a rollout's run on a joined node, which never moves the node's status. */
  @Column({ type: 'text', default: 'INSTALL' })
  purpose!: InstallRunPurpose;

  /** The steps an APPLY run runs, in order; null: every step from `startStep` on. */
  @Column({ type: 'text', array: true, nullable: true })
  steps!: InstallStep[] | null;

  @Column({ name: 'failed_step', type: 'text', nullable: true })
  failedStep!: InstallStep | null;

  @Column({ name: 'agent_channel', type: 'text', default: 'PLAIN_HTTP' })
  agentChannel!: AgentChannel;

  /**
   * When the run was given one of its cluster's install slots (`installs_at_once`): its launch is
   * queued then and its deadline counts from then. Null while it waits its turn.
   */
  @Column({ name: 'admitted_at', type: 'timestamptz', nullable: true, default: () => 'now()' })
  admittedAt!: Date | null;

  /** When the agent was started on the host (or first reported); null while its launch job has not started it. */
  @Column({ name: 'agent_launched_at', type: 'timestamptz', nullable: true })
  agentLaunchedAt!: Date | null;

  /** When the agent was last heard from. */
  @Column({ name: 'last_event_at', type: 'timestamptz', nullable: true })
  lastEventAt!: Date | null;

  /** The step events stored for this run, and their bytes (message, coded message and detail), against its caps. */
  @Column({ name: 'event_count', type: 'integer', default: 0 })
  eventCount!: number;

  @Column({ name: 'event_bytes', type: 'bigint', default: 0, transformer: { to: (value: number) => value, from: (value: string | number) => Number(value) } })
  eventBytes!: number;

  /** When the run first refused an event for its caps on events or bytes; null while it never did. */
  @Column({ name: 'events_capped_at', type: 'timestamptz', nullable: true })
  eventsCappedAt!: Date | null;
}
