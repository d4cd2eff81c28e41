import { Repeater } from '@repeaterjs/repeater';
import { Arg, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { isUuid } from '@ccos/api/data-access-db';
import { type InstallProgressPayload, NodeType, NotFoundError, type RequestContext, TOPICS, actorOf, startWith } from '@ccos/api/util-graphql';
import { InstallProgressType, InstallRunType } from './install-run.type';
import type { InstallRunView } from './install-run.view';
import type { InstallService } from './install.service';

/**
 * What one subscriber was sent last: the run, and the highest event seq of it. Kept by its stream
 * for each event, and by the resolver for a snapshot or catch-up (it alone knows what those held).
 */
interface Delivered {
  runId: string | null;
  seq: number;
}
/** The first message of an installProgress stream: the current state, no new event. */
interface Snapshot {
  readonly nodeId: string;
  readonly snapshot: true;
  readonly delivered: Delivered;
}
/** After this replica heard no events for a while: the run as it is now and its events after the last one delivered (all of them after another run's). */
interface CatchUp {
  readonly nodeId: string;
  readonly catchUp: true;
  readonly delivered: Delivered;
}
type ProgressMessage = InstallProgressPayload | Snapshot | CatchUp;

const RESUMED = Symbol('events resumed');

async function* markersOf(resumed: AsyncIterable<unknown>): AsyncGenerator<typeof RESUMED> {
  for await (const _ of resumed) {
    yield RESUMED;
  }
}

/**
 * The node's published events, and a catch-up message whenever this replica's event listener
 * is back after a gap (TOPICS.EVENTS_RESUMED): events published meanwhile never reach it, but
 * they are stored, and the subscriber knows the last one it was sent.
 */
async function* liveWithCatchUp(nodeId: string, delivered: Delivered, live: AsyncIterable<InstallProgressPayload>, resumed: AsyncIterable<unknown>): AsyncGenerator<ProgressMessage> {
  const sources: Array<AsyncIterable<InstallProgressPayload | typeof RESUMED>> = [live, markersOf(resumed)];
  for await (const message of Repeater.merge(sources)) {
    if (message === RESUMED) {
      yield { nodeId, catchUp: true, delivered };
      continue;
    }
    delivered.seq = message.runId === delivered.runId ? Math.max(delivered.seq, message.seq) : message.seq;
    delivered.runId = message.runId;
    yield message;
  }
}

/**
 * One published event reaches every subscriber of its node as the same object; its view (the
 * run with all its events, notices and diagnostics: four queries) is read once for all of
 * them, not once per subscriber. Weak keys: an entry goes when the event has been delivered.
 */
const eventViews = new WeakMap<InstallProgressPayload, Promise<InstallProgressType>>();

/** Running runs whose latest view is kept for the events that follow (the most recently read). */
const RUNS_WITH_VIEW_KEPT = 1_000;

/**
 * The latest view read of each run, reused for an event it already holds: an agent's batch is
 * stored whole before it is announced, so the read for its first event holds the others, and a
 * batch of ten costs one read, not ten. A message whose event the latest view lacks, or that says
 * the run itself changed, reads again.
 */
class LatestRunViews {
  private readonly latest = new Map<string, Promise<InstallRunType>>();

  constructor(private readonly read: (runId: string) => Promise<InstallRunType>) {}

  async of(message: InstallProgressPayload): Promise<InstallRunType> {
    const kept = this.latest.get(message.runId);
    if (kept && message.step !== null) {
      const view = await kept.catch(() => null);
      if (view?.events.some((event) => event.seq === message.seq)) {
        return view;
      }
    }
    const read = this.read(message.runId);
    this.latest.delete(message.runId);
    this.latest.set(message.runId, read);
    // Kept while the run runs: an ended run's events have all been announced.
    const forget = () => this.latest.get(message.runId) === read && this.latest.delete(message.runId);
    read.then((view) => view.status !== 'RUNNING' && forget(), forget);
    if (this.latest.size > RUNS_WITH_VIEW_KEPT) {
      this.latest.delete(this.latest.keys().next().value as string);
    }
    return read;
  }
}

@Resolver(() => NodeType)
export class InstallResolver {
  private readonly runViews = new LatestRunViews(async (runId) => this.view.of(await this.installs.run(runId)));

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
      const { events } = context as RequestContext;
      const live = events.subscribe(TOPICS.INSTALL_PROGRESS, nodeId) as AsyncIterable<InstallProgressPayload>;
      const delivered: Delivered = { runId: null, seq: 0 };
      return startWith<ProgressMessage>(() => ({ nodeId, snapshot: true, delivered }), liveWithCatchUp(nodeId, delivered, live, events.subscribe(TOPICS.EVENTS_RESUMED) as AsyncIterable<unknown>));
    },
  })
  async installProgress(@Root() message: ProgressMessage, @Arg('nodeId', () => ID) _nodeId: string): Promise<InstallProgressType> {
    if ('delivered' in message) {
      const { delivered } = message;
      const run = await this.installs.latestRun(message.nodeId);
      const view = run ? await this.view.of(run) : null;
      const sameRun = view !== null && view.id === delivered.runId;
      const events = (view?.events ?? []).filter((event) => !sameRun || event.seq > delivered.seq);
      delivered.runId = view?.id ?? null;
      delivered.seq = Math.max(sameRun ? delivered.seq : 0, ...events.map((event) => event.seq));
      return { nodeId: message.nodeId, run: view, events };
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
    const view = await this.runViews.of(message);
    return { nodeId: message.nodeId, run: view, events: view.events.filter((event) => event.seq === message.seq && message.step !== null) };
  }
}
