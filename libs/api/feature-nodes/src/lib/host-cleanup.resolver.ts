import { Arg, Authorized, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import { NodeType, type RequestContext, actorOf } from '@ccos/api/util-graphql';
import type { HostCleanupService } from './host-cleanup.service';
import type { NodeViews } from './node.mapper';

@Resolver(() => NodeType)
export class HostCleanupResolver {
  constructor(
    private readonly cleanup: HostCleanupService,
    private readonly views: NodeViews,
  ) {}

  @Authorized('OPERATOR')
  @Mutation(() => NodeType, {
    description: 'Confirms and runs the cleanup a CLEANABLE verdict lists (kubelet stopped and disabled, the listed files, a Node that is not Ready, CSRs); then the node may be installed.',
  })
  async cleanHost(@Arg('nodeId', () => ID) nodeId: string, @Ctx() context: RequestContext): Promise<NodeType> {
    return this.views.one(await this.cleanup.clean(nodeId, actorOf(context)));
  }
}
