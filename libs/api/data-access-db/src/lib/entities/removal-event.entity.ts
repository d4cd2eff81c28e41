import { Column, Entity, Unique } from 'typeorm';
import type { RemovalEventKind, RemovalPhase } from '@ccos/shared/domain';
import { RunEventColumns } from './run-columns';

/** One thing a removal run did or saw, numbered by the store as it is appended. */
@Entity({ name: 'removal_events' })
@Unique('removal_events_run_seq', ['runId', 'seq'])
export class RemovalEventEntity extends RunEventColumns {
  @Column({ type: 'text' })
  kind!: RemovalEventKind;

  /** The phase the run was in when the event happened (DONE for the closing event of a run that succeeded). */
  @Column({ type: 'text' })
  phase!: RemovalPhase;

  /** `namespace/name` for pod events. */
  @Column({ type: 'text', nullable: true })
  pod!: string | null;

  /** The PodDisruptionBudget involved, if any. */
  @Column({ type: 'text', nullable: true })
  pdb!: string | null;

  @Column({ type: 'text' })
  message!: string;
}
