import { Arg, Authorized, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { ClusterEntity, ClusterStore } from '@ccos/api/data-access-db';
import { BadUserInputError, codedFields } from '@ccos/api/util-graphql';
import { DEFAULT_REMEDIATION_POLICY } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';
import { RemediationPolicyInput } from './remediation.input';
import { ClusterRemediationType } from './remediation.type';

/** What the resolver asks of the remediator once a policy changed: plan again now. */
export interface RemediationKick {
  queueAll(): Promise<void>;
}

@Resolver()
export class RemediationResolver {
  constructor(
    private readonly clusters: ClusterStore,
    private readonly remediator: RemediationKick,
  ) {}

  @Authorized('VIEWER')
  @Query(() => ClusterRemediationType, { description: 'The cluster\'s remediation policy, and whether the cap holds it now.' })
  async clusterRemediation(@Arg('clusterId', () => ID) clusterId: string): Promise<ClusterRemediationType> {
    return toClusterRemediation(await this.clusters.get(clusterId));
  }

  @Authorized('ADMIN')
  @Mutation(() => ClusterRemediationType, { description: 'Sets the cluster\'s remediation policy (enabled false turns it off; paused holds it until resumed).' })
  async setRemediationPolicy(
    @Arg('clusterId', () => ID) clusterId: string,
    @Arg('input', () => RemediationPolicyInput) input: RemediationPolicyInput,
  ): Promise<ClusterRemediationType> {
    if (input.maxUnhealthyIsPercent && input.maxUnhealthy > 100) {
      throw new BadUserInputError('input.maxUnhealthy', message('validation.between', { min: 0, max: 100 }));
    }
    const cluster = await this.clusters.get(clusterId);
    cluster.remediationPolicy = {
      enabled: input.enabled,
      paused: input.paused,
      unhealthySeconds: input.unhealthySeconds,
      rungTimeoutSeconds: input.rungTimeoutSeconds,
      maxUnhealthy: input.maxUnhealthy,
      maxUnhealthyIsPercent: input.maxUnhealthyIsPercent,
    };
    const saved = await this.clusters.save(cluster);
    if (!input.enabled || input.paused) {
      await this.clusters.recordRemediationHeld(saved.id, null);
      saved.remediationHeld = null;
    }
    await this.remediator.queueAll();
    return toClusterRemediation(saved);
  }
}

function toClusterRemediation(cluster: ClusterEntity): ClusterRemediationType {
  const held = cluster.remediationHeld;
  const text = held ? message('remediation.held', { unhealthy: held.unhealthy, members: held.members, cap: held.cap }) : null;
  return {
    clusterId: cluster.id,
    policy: { ...(cluster.remediationPolicy ?? DEFAULT_REMEDIATION_POLICY) },
    held: held && text ? { unhealthy: held.unhealthy, members: held.members, cap: held.cap, since: new Date(held.since), message: text.message, ...codedFields('message', text) } : null,
  };
}
