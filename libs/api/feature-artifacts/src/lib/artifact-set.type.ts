import { Field, Float, GraphQLISODateTime, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { ArtifactSetKind, ClusterVersionSource } from './cluster-artifacts';

export const ArtifactSetKindEnum = { IMPORTED: 'IMPORTED', DEFAULT: 'DEFAULT', NONE: 'NONE' } as const;
registerEnumType(ArtifactSetKindEnum, {
  name: 'ArtifactSetKind',
  description: 'IMPORTED: the set imported for the cluster\'s release; DEFAULT: the files at the top of ARTIFACTS_DIR (no set imported for that release); NONE: nothing to install from.',
});

export const ClusterVersionSourceEnum = { OVERRIDE: 'OVERRIDE', CLUSTER_VERSION: 'CLUSTER_VERSION', SERVER_VERSION: 'SERVER_VERSION', UNKNOWN: 'UNKNOWN' } as const;
registerEnumType(ClusterVersionSourceEnum, {
  name: 'ClusterVersionSource',
  description: 'OVERRIDE: set by an ADMIN (setClusterArtifactVersion); CLUSTER_VERSION: OpenShift\'s ClusterVersion; SERVER_VERSION: the API server\'s /version; UNKNOWN: not read (no set depends on it) or the cluster did not answer.',
});

/** One release's imported artifact set. */
@ObjectType('ArtifactSet')
export class ArtifactSetType {
  @Field(() => String)
  version!: string;

  @Field(() => Int)
  artifacts!: number;

  @Field(() => Float)
  bytes!: number;

  @Field(() => GraphQLISODateTime)
  importedAt!: Date;

  @Field(() => String, { description: 'sha256 of the manifest agents are given for this set.' })
  manifestSha256!: string;
}

/** The artifact set a cluster's installs download, and what it lacks. */
@ObjectType('ClusterArtifactSet')
export class ClusterArtifactSetType {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => String, { nullable: true, description: 'The release the cluster runs, or the override; null when it could not be read.' })
  version!: string | null;

  @Field(() => ClusterVersionSourceEnum)
  versionSource!: ClusterVersionSource;

  @Field(() => String, { nullable: true, description: 'Why the version could not be read.' })
  versionProblem!: string | null;

  @Field(() => ArtifactSetKindEnum)
  kind!: ArtifactSetKind;

  @Field(() => String, { nullable: true, description: 'The version of the set served.' })
  setVersion!: string | null;

  @Field(() => Int)
  artifacts!: number;

  @Field(() => Float)
  bytes!: number;

  @Field(() => [String], { description: 'What an install needs that the set lacks (binary/oc, unit/kubelet.service, …); empty when complete. installNode is refused while it is not.' })
  missing!: string[];

  @Field(() => Boolean)
  complete!: boolean;
}
