import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { type RolloutEntity, type RolloutStore, isUuid } from '@ccos/api/data-access-db';
import { NotFoundError, type RequestContext, type RolloutChangedPayload, TOPICS, actorOf } from '@ccos/api/util-graphql';
import type { RolloutConductor, StartRollout } from './rollout-conductor';
import { StartRolloutInput } from './rollout.input';
import { RolloutPreviewType, RolloutType, toRolloutPreviewType, toRolloutType } from './rollout.type';

@Resolver()
export class RolloutResolver {
  constructor(
    private readonly store: RolloutStore,
    private readonly conductor: RolloutConductor,
  ) {}

  @Authorized('VIEWER')
  @Query(() => [RolloutType], { description: 'The cluster\'s rollouts, newest first (the last 50).' })
  async rollouts(@Arg('clusterId', () => ID) clusterId: string): Promise<RolloutType[]> {
    const rollouts = await this.store.ofCluster(clusterId);
    const nodes = await this.store.nodesOfEach(rollouts.map((rollout) => rollout.id));
    return rollouts.map((rollout) => toRolloutType(rollout, nodes.get(rollout.id) ?? []));
  }

  @Authorized('VIEWER')
  @Query(() => RolloutType, { nullable: true })
  async rollout(@Arg('id', () => ID) id: string): Promise<RolloutType | null> {
    const rollout = await this.store.find(id);
    return rollout ? this.view(rollout) : null;
  }

  @Authorized('OPERATOR')
  @Mutation(() => RolloutType, {
    description: 'Starts a rolling operation over the cluster\'s nodes (one rollout in progress per cluster): each node is cordoned, drained (PodDisruptionBudgets honoured: one that refuses pauses the rollout, naming it), '
      + 'acted on, brought back Ready and uncordoned, never more unavailable at once than maxUnavailable, new nodes only inside the window.',
  })
  async startRollout(@Arg('input', () => StartRolloutInput) input: StartRolloutInput, @Ctx() context: RequestContext): Promise<RolloutType> {
    return this.view(await this.conductor.startRollout(startRolloutOf(input), actorOf(context)));
  }

  @Authorized('OPERATOR')
  @Query(() => RolloutPreviewType, { description: 'What startRollout with this input would do now: its nodes in order, what each drain would do and the budgets it would meet, the window and the alerts. Refused as startRollout would be. Changes nothing.' })
  async rolloutPreview(@Arg('input', () => StartRolloutInput) input: StartRolloutInput): Promise<RolloutPreviewType> {
    return toRolloutPreviewType(await this.conductor.preview(startRolloutOf(input)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => RolloutType, { description: 'Starts no new node; a node in progress stops at its next phase, cordoned until resumed.' })
  async pauseRollout(@Arg('id', () => ID) id: string, @Ctx() context: RequestContext): Promise<RolloutType> {
    return this.view(await this.conductor.pause(id, actorOf(context)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => RolloutType, { description: 'Goes on where the rollout was; a node it paused on is tried again.' })
  async resumeRollout(@Arg('id', () => ID) id: string, @Ctx() context: RequestContext): Promise<RolloutType> {
    return this.view(await this.conductor.resume(id, actorOf(context)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => RolloutType, { description: 'Starts no new node; a node still draining is uncordoned and skipped, one already rebooting is brought back first.' })
  async cancelRollout(@Arg('id', () => ID) id: string, @Ctx() context: RequestContext): Promise<RolloutType> {
    return this.view(await this.conductor.cancel(id, actorOf(context)));
  }

  @Authorized('VIEWER')
  @Subscription(() => RolloutType, {
    description: 'Each rollout of the cluster as it is after every change: its status, what it waits for, each node\'s phase.',
    subscribe: ({ args, context }) => {
      const clusterId = String(args['clusterId']);
      if (!isUuid(clusterId)) {
        throw new NotFoundError('cluster', clusterId);
      }
      return (context as RequestContext).events.subscribe(TOPICS.ROLLOUT_CHANGED, clusterId);
    },
  })
  async rolloutChanged(@Root() change: RolloutChangedPayload, @Arg('clusterId', () => ID) _clusterId: string): Promise<RolloutType> {
    return this.view(await this.store.get(change.rolloutId));
  }

  private async view(rollout: RolloutEntity): Promise<RolloutType> {
    return toRolloutType(rollout, await this.store.nodesOf(rollout.id));
  }
}

function startRolloutOf(input: StartRolloutInput): StartRollout {
  return {
    clusterId: input.clusterId,
    kind: input.kind,
    nodeIds: input.nodeIds ?? null,
    labels: input.labels,
    maxUnavailable: input.maxUnavailable,
    maxUnavailableIsPercent: input.maxUnavailableIsPercent,
    maintenanceWindow: input.window ? { cron: input.window.cron, durationMinutes: input.window.durationMinutes, timeZone: input.window.timeZone } : null,
    pauseOnAlerts: input.pauseOnAlerts,
    drainTimeoutSeconds: input.drainTimeoutSeconds,
    readyTimeoutSeconds: input.readyTimeoutSeconds,
  };
}
