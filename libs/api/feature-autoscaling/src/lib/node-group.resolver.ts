import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { isUuid, type NodeGroupEntity } from '@ccos/api/data-access-db';
import { type AutoscalingActivityPayload, BadUserInputError, NotFoundError, PreconditionError, type RequestContext, TOPICS, actorOf, startWith } from '@ccos/api/util-graphql';
import { message } from '@ccos/shared/messages';
import { AutoscalingRefusal } from './node-group-model';
import type { NodeGroupRegistry } from './node-group-registry';
import { AddSpareInput, CreateNodeGroupInput } from './node-group.input';
import { AutoscalerConnectionType, NodeGroupHostType, NodeGroupType } from './node-group.type';
import type { NodeGroups } from './node-groups';

/** Issues the autoscaler's client certificate and says where the provider listens; null when the gRPC provider is off. */
export interface AutoscalerConnections {
  issue(clusterId: string): Promise<AutoscalerConnectionType> | null;
}

type GroupMessage = { readonly clusterId: string };

@Resolver(() => NodeGroupType)
export class NodeGroupResolver {
  constructor(
    private readonly groups: NodeGroups,
    private readonly connections: AutoscalerConnections,
  ) {}

  @Authorized('VIEWER')
  @Query(() => [NodeGroupType], { description: 'The node groups of a cluster with their pools and latest decisions.' })
  async nodeGroups(@Arg('clusterId', () => ID) clusterId: string): Promise<NodeGroupType[]> {
    return Promise.all((await this.groups.registry.groupsOf(clusterId)).map((group) => this.view(group)));
  }

  @Authorized('VIEWER')
  @Query(() => NodeGroupType)
  async nodeGroup(@Arg('id', () => ID) id: string): Promise<NodeGroupType> {
    return this.view(await this.groups.registry.group(id));
  }

  @Authorized('ADMIN')
  @Mutation(() => NodeGroupType, { description: 'Creates a node group cluster-autoscaler may scale between minSize and maxSize, from the spares added to it.' })
  async createNodeGroup(@Arg('input', () => CreateNodeGroupInput) input: CreateNodeGroupInput, @Ctx() context: RequestContext): Promise<NodeGroupType> {
    return this.view(await this.groups.registry.createGroup(input, actorOf(context), { role: context.user?.role ?? 'VIEWER' }));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeGroupHostType, { description: 'Adds a host as a spare of a node group: addNode\'s checks run (SSH, host key, facts, agent, dirty-host verdict), then it waits.' })
  async addNodeGroupSpare(@Arg('input', () => AddSpareInput) input: AddSpareInput, @Ctx() context: RequestContext): Promise<NodeGroupHostType> {
    const { groupId, ...host } = input;
    const member = await this.groups.registry.addSpare(groupId, host, actorOf(context));
    const [view] = (await this.groups.registry.membersOf(member.groupId)).filter((row) => row.nodeId === member.nodeId).map(hostView);
    return view;
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeGroupType, {
    description:
      "Scales a node group up by hand, as cluster-autoscaler's NodeGroupIncreaseSize does: raises its target by increaseBy (up to maxSize) and installs that many of its spares in one batch, in the operator's name. cluster-autoscaler, when it runs, may scale it down again once the nodes are unneeded.",
  })
  async scaleUpNodeGroup(@Arg('groupId', () => ID) groupId: string, @Arg('increaseBy', () => Int) increaseBy: number, @Ctx() context: RequestContext): Promise<NodeGroupType> {
    const group = await this.groups.registry.group(groupId);
    await refusedAs(group, 'increaseBy', () => this.groups.scaling.increaseSize(group.clusterId, group.name, increaseBy, actorOf(context)));
    return this.view(await this.groups.registry.group(groupId));
  }

  @Authorized('OPERATOR')
  @Mutation(() => NodeGroupType, {
    description:
      "Scales a node group down by one of its nodes (the one named, or the one the service chooses), as cluster-autoscaler's NodeGroupDeleteNodes does: lowers its target (never below minSize), removes the node safely (cordon, drain honouring budgets, delete), then checks the host again and puts it back in the pool.",
  })
  async scaleDownNodeGroup(
    @Arg('groupId', () => ID) groupId: string,
    @Arg('nodeId', () => ID, { nullable: true, description: 'The member to remove; without it the service chooses: a host not joined yet, then an unhealthy member, then the newest (the choice and its reason are in the activity).' }) nodeId: string | null | undefined,
    @Ctx() context: RequestContext,
  ): Promise<NodeGroupType> {
    const group = await this.groups.registry.group(groupId);
    if (!nodeId) {
      await refusedAs(group, 'groupId', () => this.groups.scaling.scaleDownBy(group.clusterId, group.name, 1, actorOf(context)));
      return this.view(await this.groups.registry.group(groupId));
    }
    const member = (await this.groups.registry.membersOf(groupId)).find((row) => row.nodeId === nodeId);
    if (!member?.node?.providerId) {
      throw new NotFoundError('node of the group', nodeId);
    }
    const providerId = member.node.providerId;
    await refusedAs(group, 'nodeId', () => this.groups.scaling.deleteNodes(group.clusterId, group.name, [providerId], actorOf(context)));
    return this.view(await this.groups.registry.group(groupId));
  }

  @Authorized('ADMIN')
  @Mutation(() => AutoscalerConnectionType, {
    description: 'Issues a client certificate for the cluster\'s cluster-autoscaler and returns the cloud-config for --cloud-provider=externalgrpc. The key is returned this once and never stored.',
  })
  async issueAutoscalerConnection(@Arg('clusterId', () => ID) clusterId: string): Promise<AutoscalerConnectionType> {
    await this.groups.registry.groupsOf(clusterId);
    const issued = this.connections.issue(clusterId);
    if (!issued) {
      throw new PreconditionError(message('nodeGroup.grpcOff'));
    }
    return issued;
  }

  @Authorized('VIEWER')
  @Subscription(() => [NodeGroupType], {
    description: 'The cluster\'s node groups now, then again at every decision (reserve, install, delete, return to pool, ...) and host state change.',
    subscribe: ({ args, context }) => {
      const clusterId = String(args['clusterId']);
      if (!isUuid(clusterId)) {
        throw new NotFoundError('cluster', clusterId);
      }
      const live = (context as RequestContext).events.subscribe(TOPICS.AUTOSCALING_ACTIVITY, clusterId) as AsyncIterable<AutoscalingActivityPayload>;
      return startWith<GroupMessage | AutoscalingActivityPayload>(() => ({ clusterId }), live);
    },
  })
  async nodeGroupsChanged(@Root() _message: GroupMessage, @Arg('clusterId', () => ID) clusterId: string): Promise<NodeGroupType[]> {
    return this.nodeGroups(clusterId);
  }

  private async view(group: NodeGroupEntity): Promise<NodeGroupType> {
    const hosts = (await this.groups.registry.membersOf(group.id)).map(hostView);
    const activity = await this.groups.registry.activitiesOf(group.id, 50);
    return {
      id: group.id,
      clusterId: group.clusterId,
      name: group.name,
      minSize: group.minSize,
      maxSize: group.maxSize,
      targetSize: group.targetSize,
      currentSize: hosts.filter((host) => ['RESERVED', 'RUNNING', 'DELETING'].includes(host.state)).length,
      spares: hosts.filter((host) => host.state === 'SPARE').length,
      labels: group.labels.map(({ key, value }) => ({ key, value })),
      taints: group.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect })),
      profile: { ...group.profile },
      hosts,
      activity: activity.map((entry) => ({ seq: entry.seq, kind: entry.kind, nodeId: entry.nodeId, hostname: entry.hostname, reason: entry.reason, reasonCode: entry.reasonCoded?.code ?? null, reasonParams: entry.reasonCoded ? { ...entry.reasonCoded.params } : null, actor: entry.actor, at: entry.at })),
      createdBy: group.createdBy,
      createdAt: group.createdAt,
    };
  }
}

/** The service's refusals (worded for cluster-autoscaler too) as the API's errors: a bad argument names its field. */
async function refusedAs<T>(group: NodeGroupEntity, field: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AutoscalingRefusal)) {
      throw error;
    }
    switch (error.code) {
      case 'INVALID_ARGUMENT':
        throw new BadUserInputError(field, error.text);
      case 'FAILED_PRECONDITION':
        throw new PreconditionError(error.text);
      case 'NOT_FOUND':
        throw new NotFoundError('node group', group.id);
    }
  }
}

function hostView(row: Awaited<ReturnType<NodeGroupRegistry['membersOf']>>[number]): NodeGroupHostType {
  return {
    nodeId: row.nodeId,
    hostname: row.node?.hostname ?? '',
    ip: row.node?.ip ?? null,
    state: row.state,
    reason: row.reason,
    reasonCode: row.reasonCoded?.code ?? null,
    reasonParams: row.reasonCoded ? { ...row.reasonCoded.params } : null,
    nodeStatus: row.node?.status ?? 'REMOVED',
    providerId: row.node?.providerId ?? null,
    since: row.updatedAt,
  };
}
