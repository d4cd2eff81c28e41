import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import type { InstallStep, StepEventStatus } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';

/** One event the agent reported; (run, seq) is unique so a re-sent event is stored once. */
@Entity({ name: 'step_events' })
@Unique('step_events_run_seq', ['runId', 'seq'])
export class StepEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ type: 'integer' })
  seq!: number;

  @Column({ type: 'text' })
  step!: InstallStep;

  @Column({ type: 'text' })
  status!: StepEventStatus;

  @Column({ type: 'integer', nullable: true })
  progress!: number | null;

  @Column({ type: 'text', nullable: true })
  message!: string | null;

  /** `message` by its message code and parameters (libs/shared/messages); null for text from before codes. */
  @Column({ name: 'message_coded', type: 'jsonb', nullable: true })
  messageCoded!: Message | null;

  @Column({ type: 'jsonb', nullable: true })
  detail!: Record<string, unknown> | null;

  /** When the agent saw it happen (its clock). */
  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;

  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt!: Date;
}
