import { Arg, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { isUuid } from '@ccos/api/data-access-db';
import { type InstallProgressPayload, NodeType, NotFoundError, type RequestContext, TOPICS, actorOf, startWith } from '@ccos/api/util-graphql';
import { InstallProgressType, InstallRunType } from './install-run.type';
import type { InstallRunView } from './install-run.view';
import type { InstallService } from './install.service';

/** The first message of an installProgress stream: the current state, no new event. */
type ProgressMessage = InstallProgressPayload | { readonly nodeId: string; readonly snapshot: true };

/**
 * One published event reaches every subscriber of its node as the same object; its view (the
 * run with all its events, notices and diagnostics: four queries) is read once for all of
 * them, not once per subscriber. Weak keys: an entry goes when the event has been delivered.
 */
const eventViews = new WeakMap<InstallProgressPayload, Promise<InstallProgressType>>();

@Resolver(() => NodeType)
export class InstallResolver {
  constructor(
    private readonly installs: InstallService,
    private readonly view: InstallRunView,
  ) {}

  @Authorized('VIEWER')
  @FieldResolver(() => [InstallRunType], { description: 'Install runs, oldest first.' })
  async installRuns(@Root() node: NodeType): Promise<InstallRunType[]> {
    return Promise.all((await this.installs.runsOf(node.id)).map((run) => this.view.of(run)));
  }

  @Authorized('VIEWER')
  @Query(() => InstallRunType)
  async installRun(@Arg('id', () => ID) id: string): Promise<InstallRunType> {
    return this.view.of(await this.installs.run(id));
  }

  @Authorized('OPERATOR')
  @Mutation(() => InstallRunType, { description: 'Starts the agent on a READY_TO_INSTALL node (the seed\'s 安装节点).' })
  async installNode(@Arg('nodeId', () => ID) nodeId: string, @Ctx() context: RequestContext): Promise<InstallRunType> {
    return this.view.of(await this.installs.install(nodeId, actorOf(context)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => InstallRunType, { description: 'A new run that resumes at the first step that did not succeed.' })
  async retryInstall(@Arg('nodeId', () => ID) nodeId: string, @Ctx() context: RequestContext): Promise<InstallRunType> {
    return this.view.of(await this.installs.retry(nodeId, actorOf(context)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => InstallRunType, { description: 'Stops the agent; the run ends CANCELLED and can be retried.' })
  async cancelInstall(@Arg('nodeId', () => ID) nodeId: string, @Ctx() context: RequestContext): Promise<InstallRunType> {
    return this.view.of(await this.installs.cancel(nodeId, actorOf(context)));
  }

  @Authorized('VIEWER')
  @Subscription(() => InstallProgressType, {
    description: 'The latest run of a node as it is now, then one message per event, in order.',
    subscribe: ({ args, context }) => {
      const nodeId = String(args['nodeId']);
      // Refused here: the first message would look the id up in a uuid column.
      if (!isUuid(nodeId)) {
        throw new NotFoundError('node', nodeId);
      }
      const live = (context as RequestContext).events.subscribe(TOPICS.INSTALL_PROGRESS, nodeId) as AsyncIterable<ProgressMessage>;
      return startWith<ProgressMessage>(() => ({ nodeId, snapshot: true }), live);
    },
  })
  async installProgress(@Root() message: ProgressMessage, @Arg('nodeId', () => ID) _nodeId: string): Promise<InstallProgressType> {
    if ('snapshot' in message) {
      const run = await this.installs.latestRun(message.nodeId);
      const view = run ? await this.view.of(run) : null;
      return { nodeId: message.nodeId, run: view, events: view?.events ?? [] };
    }
    let shared = eventViews.get(message);
    if (!shared) {
      shared = this.eventView(message);
      eventViews.set(message, shared);
      // A failed read is not kept: the next subscriber tries again.
      shared.catch(() => eventViews.delete(message));
    }
    return shared;
  }

  private async eventView(message: InstallProgressPayload): Promise<InstallProgressType> {
    const view = await this.view.of(await this.installs.run(message.runId));
    return { nodeId: message.nodeId, run: view, events: view.events.filter((event) => event.seq === message.seq && message.step !== null) };
  }
}
