import { Column, Entity, Unique } from 'typeorm';
import type { InstallStep, StepEventStatus } from '@ccos/shared/domain';
import { RunEventColumns } from './run-columns';

/** One event the agent reported, numbered by the agent: a re-sent event is stored once. */
@Entity({ name: 'step_events' })
@Unique('step_events_run_seq', ['runId', 'seq'])
export class StepEventEntity extends RunEventColumns {
  @Column({ type: 'text' })
  step!: InstallStep;

  @Column({ type: 'text' })
  status!: StepEventStatus;

  @Column({ type: 'integer', nullable: true })
  progress!: number | null;

  @Column({ type: 'text', nullable: true })
  message!: string | null;

  /** When the service stored it; `occurredAt` is when the agent saw it happen, by the agent's clock. */
  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt!: Date;
}
