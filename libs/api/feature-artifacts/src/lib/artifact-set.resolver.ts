import { Arg, Authorized, ID, Mutation, Query, Resolver } from 'type-graphql';
import { BadUserInputError } from '@ccos/api/util-graphql';
import { isSafeReleaseVersion } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';
import { ArtifactSetType, ClusterArtifactSetType } from './artifact-set.type';
import type { ClusterArtifactSet, ClusterArtifacts } from './cluster-artifacts';

/** Stores the per-cluster version override (the clusters table's artifact_version). */
export interface ArtifactVersionOverrides {
  set(clusterId: string, version: string | null): Promise<void>;
}

@Resolver()
export class ArtifactSetResolver {
  constructor(
    private readonly clusterArtifacts: ClusterArtifacts,
    private readonly overrides: ArtifactVersionOverrides,
  ) {}

  @Authorized('VIEWER')
  @Query(() => [ArtifactSetType], { description: 'Every imported release artifact set (import with `npm run artifacts -- import` or `POST /admin/artifact-sets`).' })
  async artifactSets(): Promise<ArtifactSetType[]> {
    return this.clusterArtifacts.store.list();
  }

  @Authorized('VIEWER')
  @Query(() => ClusterArtifactSetType, { description: 'The artifact set the cluster\'s installs use (by its release version) and what it lacks.' })
  async clusterArtifactSet(@Arg('clusterId', () => ID) clusterId: string): Promise<ClusterArtifactSetType> {
    return toType(await this.clusterArtifacts.resolve(clusterId, { alwaysReadVersion: true }));
  }

  @Authorized('ADMIN')
  @Mutation(() => ClusterArtifactSetType, { description: 'Makes the cluster use the set of `version` instead of the one its own version names; null follows the cluster again.' })
  async setClusterArtifactVersion(
    @Arg('clusterId', () => ID) clusterId: string,
    @Arg('version', () => String, { nullable: true }) version: string | null | undefined,
  ): Promise<ClusterArtifactSetType> {
    const value = version?.trim() || null;
    if (value !== null && !isSafeReleaseVersion(value)) {
      throw new BadUserInputError('version', message('artifacts.notVersion'));
    }
    await this.overrides.set(clusterId, value);
    this.clusterArtifacts.forget(clusterId);
    return toType(await this.clusterArtifacts.resolve(clusterId, { alwaysReadVersion: true }));
  }
}

function toType(set: ClusterArtifactSet): ClusterArtifactSetType {
  const { clusterId, version, versionSource, versionProblem, kind, setVersion, artifacts, bytes, missing } = set;
  return { clusterId, version, versionSource, versionProblem, kind, setVersion, artifacts, bytes, missing: [...missing], complete: missing.length === 0 };
}
