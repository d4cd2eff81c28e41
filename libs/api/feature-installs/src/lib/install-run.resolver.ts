import { Args, Authorized, FieldResolver, Resolver, Root } from 'type-graphql';
import type { InstallRunStore } from '@ccos/api/data-access-db';
import { RunEventsArgs } from '@ccos/api/util-graphql';
import { InstallRunType, PlaceInLineType, StepEventType } from './install-run.type';
import { toStepEventType } from './install-run.view';

/** A run's log a page at a time: one read of a run answers at most MAX_RUN_EVENTS_PAGE events, whatever its agent sent. */
@Resolver(() => InstallRunType)
export class InstallRunResolver {
  constructor(private readonly runs: InstallRunStore) {}

  @Authorized('VIEWER')
  @FieldResolver(() => [StepEventType], { description: 'What the agent reported, in order: the `first` events after seq `after`.' })
  async events(@Root() run: InstallRunType, @Args(() => RunEventsArgs) page: RunEventsArgs): Promise<StepEventType[]> {
    return (await this.runs.events.list(run.id, page.after, page.first)).map(toStepEventType);
  }

  @Authorized('VIEWER')
  @FieldResolver(() => PlaceInLineType, { nullable: true, description: 'Where the run stands in its cluster\'s line for an install slot; null once it started (or ended).' })
  async placeInLine(@Root() run: InstallRunType): Promise<PlaceInLineType | null> {
    if (run.status !== 'RUNNING' || run.admittedAt) {
      return null;
    }
    return (await this.runs.placesInLine([run.id])).get(run.id) ?? null;
  }
}
