import { Arg, Authorized, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { ClusterEntity } from '@ccos/api/data-access-db';
import type { ClusterService } from './cluster.service';
import { ClusterType, HostMinimumsInput } from './cluster.type';
import { RegisterClusterInput } from './register-cluster.input';

@Resolver(() => ClusterType)
export class ClusterResolver {
  constructor(private readonly clusterService: ClusterService) {}

  @Authorized('VIEWER')
  @Query(() => [ClusterType])
  async clusters(): Promise<ClusterType[]> {
    return (await this.clusterService.list()).map(toClusterType);
  }

  @Authorized('VIEWER')
  @Query(() => ClusterType)
  async cluster(@Arg('id', () => ID) id: string): Promise<ClusterType> {
    return toClusterType(await this.clusterService.get(id));
  }

  @Authorized('ADMIN')
  @Mutation(() => ClusterType)
  async registerCluster(@Arg('input', () => RegisterClusterInput) input: RegisterClusterInput): Promise<ClusterType> {
    return toClusterType(await this.clusterService.register(input));
  }

  @Authorized('ADMIN')
  @Mutation(() => ClusterType, {
    description: 'Turns the CSR auto-approver on or off for one cluster: `enabled` for joins, `renewals` for serving-certificate renewals of nodes joined here; an absent argument keeps its setting.',
  })
  async setCsrAutoApprove(
    @Arg('clusterId', () => ID) clusterId: string,
    @Arg('enabled', () => Boolean, { nullable: true, description: 'Join auto-approve (Cluster.csrAutoApprove).' }) enabled: boolean | null | undefined,
    @Arg('renewals', () => Boolean, { nullable: true, description: 'Renewal auto-approve (Cluster.autoApproveRenewals).' }) renewals: boolean | null | undefined,
  ): Promise<ClusterType> {
    return toClusterType(await this.clusterService.setCsrAutoApprove(clusterId, { enabled, renewals }));
  }

  @Authorized('ADMIN')
  @Mutation(() => ClusterType, {
    description: 'Sets how many installs run at once on the cluster (1–1,000; 50 unless set). Installs asked for beyond it wait, in the order they were asked for, with their place in line on InstallRun.placeInLine; raising it starts waiting installs at once.',
  })
  async setClusterInstallsAtOnce(@Arg('clusterId', () => ID) clusterId: string, @Arg('limit', () => Int) limit: number): Promise<ClusterType> {
    return toClusterType(await this.clusterService.setInstallsAtOnce(clusterId, limit));
  }

  @Authorized('ADMIN')
  @Mutation(() => ClusterType, {
    description:
      'Turns four-eyes on or off for the cluster: with it on, forced or ungraceful removals, removals going on without their host, forced drains, forced CSR approvals and rollouts are held as approval requests until another user approves them. Requests already held stay.',
  })
  async setClusterFourEyes(@Arg('clusterId', () => ID) clusterId: string, @Arg('enabled', () => Boolean) enabled: boolean): Promise<ClusterType> {
    return toClusterType(await this.clusterService.setFourEyes(clusterId, enabled));
  }

  @Authorized('ADMIN')
  @Mutation(() => ClusterType, {
    description: 'Sets what every host added to the cluster must have at least (checked when it is added: a host below is PRECHECK_FAILED naming each failed check); null asks nothing. Hosts added before are not checked again.',
  })
  async setClusterHostMinimums(
    @Arg('clusterId', () => ID) clusterId: string,
    @Arg('minimums', () => HostMinimumsInput, { nullable: true }) minimums: HostMinimumsInput | null,
  ): Promise<ClusterType> {
    return toClusterType(await this.clusterService.setHostMinimums(clusterId, minimums));
  }
}

/** Copies only the public fields: sealed credentials never reach a response, even by accident. */
function toClusterType(cluster: ClusterEntity): ClusterType {
  const { id, name, apiServerUrl, vip, csrAutoApprove, autoApproveRenewals, bootstrapStyle, allowInsecureTransport, credentialKind, installsAtOnce, fourEyes, createdAt, updatedAt } = cluster;
  const hostMinimums = cluster.hostMinimums ? { cpus: cluster.hostMinimums.cpus, memoryBytes: cluster.hostMinimums.memoryBytes, diskBytes: cluster.hostMinimums.diskBytes ?? 0, labelKeys: [...(cluster.hostMinimums.labelKeys ?? [])] } : null;
  const readiness = cluster.readinessCheckedAt ? { checkedAt: cluster.readinessCheckedAt, failing: cluster.readinessFailing ?? [], ready: (cluster.readinessFailing ?? []).length === 0 } : null;
  return { id, name, apiServerUrl, vip, csrAutoApprove, autoApproveRenewals, bootstrapStyle, allowInsecureTransport, credentialKind, installsAtOnce, fourEyes, readiness, hostMinimums, createdAt, updatedAt };
}
