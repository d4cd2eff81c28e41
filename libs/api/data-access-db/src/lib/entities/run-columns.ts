import { Column, CreateDateColumn, PrimaryColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { Message } from '@ccos/shared/messages';

/**
 * The header every run of a node shares, whatever it does (an install run, a removal run): each
 * kind keeps its own table and adds its own columns. `Status` is the kind's own list of statuses.
 */
export abstract class RunColumns<Status extends string> {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'node_id', type: 'uuid' })
  nodeId!: string;

  @Column({ type: 'text' })
  status!: Status;

  @Column({ type: 'text', nullable: true })
  reason!: string | null;

  /** `reason` by its message code and parameters (libs/shared/messages); null for text from before codes. */
  @Column({ name: 'reason_coded', type: 'jsonb', nullable: true })
  reasonCoded!: Message | null;

  /** An operator asked to cancel; the run's executor hears of it and stops. */
  @Column({ name: 'cancel_requested', type: 'boolean', default: false })
  cancelRequested!: boolean;

  @Column({ name: 'requested_by', type: 'text' })
  requestedBy!: string;

  @CreateDateColumn({ name: 'started_at', type: 'timestamptz' })
  startedAt!: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/**
 * What every event of a run's ordered log holds: its run, its place in that order (`seq`, from 1,
 * unique per run, so a re-sent event is stored once), its text, detail and time. Each kind adds
 * its own columns and says whether `message` may be empty.
 */
export abstract class RunEventColumns {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ type: 'integer' })
  seq!: number;

  abstract message: string | null;

  /** `message` by its message code and parameters (libs/shared/messages); null for text from before codes. */
  @Column({ name: 'message_coded', type: 'jsonb', nullable: true })
  messageCoded!: Message | null;

  @Column({ type: 'jsonb', nullable: true })
  detail!: Record<string, unknown> | null;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;
}
