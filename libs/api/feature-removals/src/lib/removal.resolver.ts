import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { isUuid } from '@ccos/api/data-access-db';
import { NotFoundError, type RemovalProgressPayload, type RequestContext, RunEventsArgs, TOPICS, actorOf } from '@ccos/api/util-graphql';
import { RemovalPreviewType } from './removal-preview.type';
import { type ProgressTick, progressTicks } from './removal-progress';
import { RemovalEventType, RemovalProgressType, RemovalRunType, UncordonResultType } from './removal-run.type';
import type { RemovalService } from './removal.service';
import { RemoveNodeInput, removalOptionsOf } from './remove-node.input';

@Resolver(() => RemovalRunType)
export class RemovalResolver {
  constructor(private readonly removals: RemovalService) {}

  @Authorized('VIEWER')
  @Query(() => RemovalPreviewType, {
    description: 'What removeNode with these options would do: pods evicted, skipped or refused, budgets, room on the other workers, safety verdicts, SSH reachability. Changes nothing.',
  })
  async removalPreview(
    @Arg('nodeId', () => ID) nodeId: string,
    @Arg('options', () => RemoveNodeInput, { nullable: true }) options: RemoveNodeInput | null,
  ): Promise<RemovalPreviewType> {
    return this.removals.preview(nodeId, removalOptionsOf(options));
  }

  @Authorized('VIEWER')
  @Query(() => [RemovalRunType], { description: "A node's removal runs, oldest first." })
  async removalRuns(@Arg('nodeId', () => ID) nodeId: string): Promise<RemovalRunType[]> {
    return Promise.all((await this.removals.runsOf(nodeId)).map((run) => this.removals.view(run)));
  }

  @Authorized('VIEWER')
  @Query(() => RemovalRunType)
  async removalRun(@Arg('id', () => ID) id: string): Promise<RemovalRunType> {
    return this.removals.view(await this.removals.run(id));
  }

  @Authorized('VIEWER')
  @FieldResolver(() => [RemovalEventType], { description: 'What the run did, in order: the `first` events after seq `after`.' })
  async events(@Root() run: RemovalRunType, @Args(() => RunEventsArgs) page: RunEventsArgs): Promise<RemovalEventType[]> {
    return this.removals.events(run.id, page.after, page.first);
  }

  @Authorized('OPERATOR')
  @Mutation(() => RemovalRunType, {
    description:
      'Removes a worker (the seed\'s cordon, drain, delete node): starts a run and returns at once; follow it with removalProgress. A drain that does not finish leaves the node cordoned (DRAIN_FAILED) and the Node in place.',
  })
  async removeNode(
    @Arg('nodeId', () => ID) nodeId: string,
    @Arg('options', () => RemoveNodeInput, { nullable: true }) options: RemoveNodeInput | null,
    @Ctx() context: RequestContext,
  ): Promise<RemovalRunType> {
    return this.removals.view(await this.removals.start(nodeId, removalOptionsOf(options), actorOf(context)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => RemovalRunType, { description: 'Stops a removal while it drains; the node stays cordoned (DRAIN_FAILED) until uncordoned or removed again.' })
  async cancelRemoval(@Arg('nodeId', () => ID) nodeId: string, @Ctx() context: RequestContext): Promise<RemovalRunType> {
    return this.removals.view(await this.removals.cancel(nodeId, actorOf(context)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => RemovalRunType, {
    description:
      'Has a running removal go on without its host, for a host that is gone: stopping the kubelet and cleaning the host are passed, and the node is marked reinstall required (its kubelet may still hold credentials). The reason goes to the audit log.',
  })
  async skipRemovalHostSide(@Arg('nodeId', () => ID) nodeId: string, @Arg('reason', () => String) reason: string, @Ctx() context: RequestContext): Promise<RemovalRunType> {
    return this.removals.view(await this.removals.skipHostSide(nodeId, reason, actorOf(context)));
  }

  @Authorized('ADMIN')
  @Mutation(() => RemovalRunType, {
    description:
      "Has a running removal's drain go past the PodDisruptionBudgets that hold it: the pods they refuse to evict are deleted instead (kubectl drain --disable-eviction, for those pods only), so the budget's protection is lost. ADMIN, with a reason kept in the audit log; only while the run drains.",
  })
  async forceRemovalDrain(@Arg('nodeId', () => ID) nodeId: string, @Arg('reason', () => String) reason: string, @Ctx() context: RequestContext): Promise<RemovalRunType> {
    return this.removals.view(await this.removals.forceDrain(nodeId, reason, actorOf(context)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => UncordonResultType, { description: 'Makes a node schedulable again after a removal that failed or was cancelled (DRAIN_FAILED → JOINED).' })
  async uncordonNode(@Arg('nodeId', () => ID) nodeId: string, @Ctx() context: RequestContext): Promise<UncordonResultType> {
    return this.removals.uncordon(nodeId, actorOf(context));
  }

  @Authorized('VIEWER')
  @Subscription(() => RemovalProgressType, {
    description: "The node's latest removal run as it is now with all its events, then the run and each new event as they happen, in order.",
    subscribe: ({ args, context }) => {
      const nodeId = String(args['nodeId']);
      // Refused here: the first message would look the id up in a uuid column.
      if (!isUuid(nodeId)) {
        throw new NotFoundError('node', nodeId);
      }
      return progressTicks(nodeId, (context as RequestContext).events.subscribe(TOPICS.REMOVAL_PROGRESS, nodeId) as AsyncIterable<RemovalProgressPayload>);
    },
  })
  async removalProgress(@Root() tick: ProgressTick, @Arg('nodeId', () => ID) _nodeId: string): Promise<RemovalProgressType> {
    return this.removals.progressMessage(tick);
  }
}
