import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { isUuid } from '@ccos/api/data-access-db';
import { type BatchProgressPayload, NotFoundError, type RequestContext, TOPICS, actorOf, startWith } from '@ccos/api/util-graphql';
import { AddNodesInput } from './add-nodes.input';
import type { NodeBatchService } from './node-batch.service';
import { AddNodesResultType, NodeBatchType } from './node-batch.type';

type BatchMessage = { readonly batchId: string };

@Resolver(() => NodeBatchType)
export class NodeBatchResolver {
  constructor(private readonly service: NodeBatchService) {}

  @Authorized('OPERATOR')
  @Mutation(() => AddNodesResultType, {
    description:
      'Enters many hosts at once. Every row is checked first and all problems come back on their rows; nothing is stored while a row has a problem, ' +
      'unless addValidRows is set (then the passing rows are added, in one batch). Each added host is then connected to and checked in the background.',
  })
  async addNodes(@Arg('input', () => AddNodesInput) input: AddNodesInput, @Ctx() context: RequestContext): Promise<AddNodesResultType> {
    return this.service.addNodes(input, actorOf(context), { role: context.user?.role ?? 'VIEWER' });
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeBatchType, { description: 'Installs the batch\'s hosts, at most `concurrency` at once (default: the service\'s setting), each on its own.' })
  async installBatch(
    @Arg('batchId', () => ID) batchId: string,
    @Arg('concurrency', () => Int, { nullable: true }) concurrency: number | null,
    @Ctx() context: RequestContext,
  ): Promise<NodeBatchType> {
    return this.service.installBatch(batchId, concurrency ?? null, actorOf(context));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeBatchType, { description: 'Queues the failed hosts again: failed checks connect again first, failed installs resume at their failed step.' })
  async retryFailed(@Arg('batchId', () => ID) batchId: string, @Ctx() context: RequestContext): Promise<NodeBatchType> {
    return this.service.retryFailed(batchId, actorOf(context));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeBatchType, { description: 'Takes the hosts that have not started out of the queue; installs already running go on.' })
  async cancelRemaining(@Arg('batchId', () => ID) batchId: string): Promise<NodeBatchType> {
    return this.service.cancelRemaining(batchId);
  }

  @Authorized('VIEWER')
  @Query(() => NodeBatchType)
  async batch(@Arg('id', () => ID) id: string): Promise<NodeBatchType> {
    return this.service.batch(id);
  }

  @Authorized('VIEWER')
  @Query(() => [NodeBatchType], { description: 'The latest batches of a cluster, newest first.' })
  async batches(@Arg('clusterId', () => ID) clusterId: string): Promise<NodeBatchType[]> {
    return this.service.batchesOf(clusterId);
  }

  @Authorized('VIEWER')
  @Subscription(() => NodeBatchType, {
    description: 'The batch as it is now, then again whenever one of its hosts changes phase, status or install step.',
    subscribe: ({ args, context }) => {
      const batchId = String(args['batchId']);
      // Refused here: the first message would look the id up in a uuid column.
      if (!isUuid(batchId)) {
        throw new NotFoundError('batch', batchId);
      }
      const live = (context as RequestContext).events.subscribe(TOPICS.BATCH_PROGRESS, batchId) as AsyncIterable<BatchProgressPayload>;
      return startWith<BatchMessage>(() => ({ batchId }), live);
    },
  })
  async batchProgress(@Root() message: BatchMessage, @Arg('batchId', () => ID) _batchId: string): Promise<NodeBatchType> {
    return this.service.batch(message.batchId);
  }
}
