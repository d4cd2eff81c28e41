import { Max, Min } from 'class-validator';
import { ArgsType, Field, Int } from 'type-graphql';
import { coded } from './validation';

/** The most events one read of a run's log returns, and what it returns unasked: a real install has about 50, a drain one a pod. */
export const MAX_RUN_EVENTS_PAGE = 500;

/** A page of a run's events (InstallRun.events, RemovalRun.events), in order: the `first` after seq `after`. */
@ArgsType()
export class RunEventsArgs {
  @Field(() => Int, { defaultValue: MAX_RUN_EVENTS_PAGE, description: `How many events, at most ${MAX_RUN_EVENTS_PAGE}. Fewer than asked means the log ends there (compare the run's lastSeq).` })
  @Min(1, coded('validation.between', { min: 1, max: MAX_RUN_EVENTS_PAGE }))
  @Max(MAX_RUN_EVENTS_PAGE, coded('validation.between', { min: 1, max: MAX_RUN_EVENTS_PAGE }))
  first: number = MAX_RUN_EVENTS_PAGE;

  @Field(() => Int, { defaultValue: 0, description: 'The seq of the last event already read (the cursor); 0 from the start.' })
  @Min(0, coded('validation.atLeast', { min: 0 }))
  after = 0;
}
