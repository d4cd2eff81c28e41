import { Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import type { RemovalEventKind } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';

/** One thing a removal run did or saw; (run, seq) is unique, so an event is stored once. */
@Entity({ name: 'removal_events' })
@Unique('removal_events_run_seq', ['runId', 'seq'])
export class RemovalEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @Column({ type: 'integer' })
  seq!: number;

  @Column({ type: 'text' })
  kind!: RemovalEventKind;

  /** `namespace/name` for pod events. */
  @Column({ type: 'text', nullable: true })
  pod!: string | null;

  /** The PodDisruptionBudget involved, if any. */
  @Column({ type: 'text', nullable: true })
  pdb!: string | null;

  @Column({ type: 'text' })
  message!: string;

  /** `message` by its message code and parameters (libs/shared/messages); null for text from before codes. */
  @Column({ name: 'message_coded', type: 'jsonb', nullable: true })
  messageCoded!: Message | null;

  @Column({ type: 'jsonb', nullable: true })
  detail!: Record<string, unknown> | null;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;
}
