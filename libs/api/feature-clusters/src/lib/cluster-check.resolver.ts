import { Arg, Authorized, ID, Query, Resolver } from 'type-graphql';
import { codedFields } from '@ccos/api/util-graphql';
import type { ClusterCheckService } from './cluster-check.service';
import { ClusterCheckType } from './cluster-check.type';

@Resolver(() => ClusterCheckType)
export class ClusterCheckResolver {
  constructor(private readonly checks: ClusterCheckService) {}

  @Authorized('VIEWER')
  @Query(() => [ClusterCheckType], {
    description:
      "Whether the cluster is ready for installs, asked of its API server as the service: API_ACCESS, BOOTSTRAP_NAMESPACE, SERVICE_PERMISSIONS, and RUN_IDENTITIES_FILE_CSRS once the service can mint accounts in the bootstrap namespace (only API_ACCESS when the API server does not answer). Dry runs and access reviews, but for one throwaway ServiceAccount in the bootstrap namespace that is deleted again at once.",
  })
  async clusterChecks(@Arg('clusterId', () => ID) clusterId: string): Promise<ClusterCheckType[]> {
    return (await this.checks.check(clusterId)).map((check) => ({ name: check.name, ok: check.ok, reason: check.reason.message, ...codedFields('reason', check.reason), fix: check.fix }));
  }

  @Authorized('VIEWER')
  @Query(() => String, {
    description: "The manifest (multi-document YAML for `kubectl apply -f -`) that lets the cluster's install runs get bootstrap identities: BOOTSTRAP_NAMESPACE, its binding to system:node-bootstrapper, the service's Role there and its binding to the registered credentials' user.",
  })
  async clusterBootstrapManifest(@Arg('clusterId', () => ID) clusterId: string): Promise<string> {
    return this.checks.bootstrapManifest(clusterId);
  }
}
