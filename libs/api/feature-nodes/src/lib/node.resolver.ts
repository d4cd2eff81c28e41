import { Arg, Authorized, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { isUuid } from '@ccos/api/data-access-db';
import { type NodeChangedPayload, NodeType, NotFoundError, type RequestContext, TOPICS, startWith } from '@ccos/api/util-graphql';
import { AddNodeInput, LabelInput, SshCredentialsInput, TaintInput } from './add-node.input';
import type { NodeProvisioner } from './node-provisioner';
import type { NodeViews } from './node.mapper';
import { MAX_NODES_PAGE, type NodeService } from './node.service';

@ObjectType('NodeChange', { description: 'A node changed; `node` is null when its record was deleted.' })
export class NodeChangeType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => NodeType, { nullable: true })
  node!: NodeType | null;
}

/** A change published for the cluster, or the first message of a one-node stream (the node as it is now). */
type NodeMessage = Pick<NodeChangedPayload, 'nodeId'>;

async function* changesOf(nodeId: string, live: AsyncIterable<NodeChangedPayload>): AsyncGenerator<NodeMessage> {
  for await (const change of live) {
    if (change.nodeId === nodeId) {
      yield change;
    }
  }
}

@Resolver(() => NodeType)
export class NodeResolver {
  constructor(
    private readonly nodeService: NodeService,
    private readonly views: NodeViews,
    private readonly provisioner: Pick<NodeProvisioner, 'reinspect'>,
  ) {}

  @Authorized('VIEWER')
  @Query(() => [NodeType], { description: 'Every node of a cluster in hostname order: added here or discovered in it, removed ones included.' })
  async nodes(
    @Arg('clusterId', () => ID) clusterId: string,
    @Arg('first', () => Int, { nullable: true, description: `Only the first nodes in hostname order, 1–${MAX_NODES_PAGE}: a page to show while the whole list comes.` }) first: number | null | undefined,
  ): Promise<NodeType[]> {
    return this.views.many(await this.nodeService.list(clusterId, first ?? undefined));
  }

  @Authorized('VIEWER')
  @Query(() => NodeType)
  async node(@Arg('id', () => ID) id: string): Promise<NodeType> {
    return this.views.one(await this.nodeService.get(id));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeType, { description: 'Enters a host; the service then connects, checks it and copies the agent in the background (status ADDING → READY_TO_INSTALL).' })
  async addNode(@Arg('input', () => AddNodeInput) input: AddNodeInput, @Ctx() context: RequestContext): Promise<NodeType> {
    return this.views.one(await this.nodeService.add(input, { role: context.user?.role ?? 'VIEWER' }));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeType)
  async updateNodeCredentials(@Arg('nodeId', () => ID) nodeId: string, @Arg('input', () => SshCredentialsInput) input: SshCredentialsInput): Promise<NodeType> {
    return this.views.one(await this.nodeService.updateCredentials(nodeId, input));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeType, {
    description:
      'Sets the labels and taints this service manages on a node (replacing the ones it gave before): in the record before its install starts, on the Node object too once it has joined. Labels and taints others set on the Node stay. Refused while an install or a removal runs.',
  })
  async setNodeLabels(
    @Arg('nodeId', () => ID) nodeId: string,
    @Arg('labels', () => [LabelInput]) labels: LabelInput[],
    @Arg('taints', () => [TaintInput], { defaultValue: [] }) taints: TaintInput[],
    @Arg('roleLabelReason', () => String, { nullable: true, description: 'Why the node takes a role an OPERATOR may not give (ADMIN only; kept in the audit log).' }) roleLabelReason: string | null,
    @Ctx() context: RequestContext,
  ): Promise<NodeType> {
    return this.views.one(await this.nodeService.setMarks(nodeId, { labels, taints }, { role: context.user?.role ?? 'VIEWER', reason: roleLabelReason ?? undefined }));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeType, {
    description:
      'Reads the host\'s facts again over SSH (CPUs, memory, disks, NICs, DMI names, OS and kernel) and records them with what changed since the last reading (facts.changes). The node\'s status stays; a host that cannot be reached changes nothing and says why.',
  })
  async reinspectHost(@Arg('nodeId', () => ID) nodeId: string): Promise<NodeType> {
    return this.views.one(await this.provisioner.reinspect(nodeId));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeType, { description: 'Connects again, re-checks the host and copies the agent again.' })
  async recopyAgent(@Arg('nodeId', () => ID) nodeId: string): Promise<NodeType> {
    return this.views.one(await this.nodeService.recopyAgent(nodeId));
  }

  @Authorized('ADMIN')
  @Mutation(() => NodeType, { description: 'Trusts the host key the host now presents; repeat its fingerprint to confirm.' })
  async acceptHostKey(@Arg('nodeId', () => ID) nodeId: string, @Arg('fingerprint', () => String) fingerprint: string): Promise<NodeType> {
    return this.views.one(await this.nodeService.acceptHostKey(nodeId, fingerprint));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeType, { description: 'Forgets a node that never joined the cluster (or was removed).' })
  async deleteNodeRecord(@Arg('nodeId', () => ID) nodeId: string): Promise<NodeType> {
    return this.views.one(await this.nodeService.deleteRecord(nodeId));
  }

  @Authorized('VIEWER')
  @Subscription(() => NodeChangeType, {
    description:
      'The cluster\'s nodes as they change. With nodeId, that node\'s changes only, the first message being the node as it is now: a page that read the node before subscribing misses nothing that changed in between.',
    subscribe: ({ args, context }) => {
      const live = (context as RequestContext).events.subscribe(TOPICS.NODE_CHANGED, String(args['clusterId'])) as AsyncIterable<NodeChangedPayload>;
      const nodeId: unknown = args['nodeId'];
      if (nodeId === undefined || nodeId === null) {
        return live;
      }
      // Refused here: the first message would look the id up in a uuid column.
      if (typeof nodeId !== 'string' || !isUuid(nodeId)) {
        throw new NotFoundError('node', String(nodeId));
      }
      return startWith<NodeMessage>(() => ({ nodeId }), changesOf(nodeId, live));
    },
  })
  async nodeChanged(
    @Root() message: NodeMessage,
    @Arg('clusterId', () => ID) _clusterId: string,
    @Arg('nodeId', () => ID, { nullable: true }) _nodeId: string | null,
  ): Promise<NodeChangeType> {
    const node = await this.nodeService.find(message.nodeId);
    return { nodeId: message.nodeId, node: node ? await this.views.one(node) : null };
  }
}
