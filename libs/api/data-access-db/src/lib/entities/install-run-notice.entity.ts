import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** What the service raised on an install run (not the agent's step events). */
export type InstallRunNoticeKind = 'CSR_IMPOSTOR';

/**
 * A notice the service raised on an install run, once per run, kind and subject (e.g. the
 * identity that filed impostor CSRs); repeats only count up, so a flood stays one row.
 */
@Entity({ name: 'install_run_notices' })
export class InstallRunNoticeEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ type: 'text' })
  kind!: InstallRunNoticeKind;

  /** Who or what the notice is about (an impostor's user name). */
  @Column({ type: 'text' })
  subject!: string;

  /** The latest occurrence, in words. */
  @Column({ type: 'text' })
  message!: string;

  @Column({ type: 'jsonb', nullable: true })
  detail!: Record<string, unknown> | null;

  @Column({ type: 'integer', default: 1 })
  count!: number;

  @Column({ name: 'first_at', type: 'timestamptz', default: () => 'now()' })
  firstAt!: Date;

  @Column({ name: 'last_at', type: 'timestamptz', default: () => 'now()' })
  lastAt!: Date;
}
