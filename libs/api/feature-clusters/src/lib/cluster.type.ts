import { ArrayMaxSize, Max, Min } from 'class-validator';
import { Field, Float, GraphQLISODateTime, ID, InputType, Int, ObjectType } from 'type-graphql';
import type { BootstrapStyle } from '@ccos/api/data-access-db';
import { Satisfies } from '@ccos/api/util-graphql';
import { BootstrapStyleEnum } from '@ccos/api/util-graphql';
import { checkLabelKey } from '@ccos/shared/domain';

/** The outcome of a cluster's last readiness check (`clusterChecks`). */
@ObjectType('ClusterReadiness')
export class ClusterReadinessType {
  @Field(() => GraphQLISODateTime)
  checkedAt!: Date;

  @Field(() => [String], { description: 'The names of the checks that failed (as clusterChecks names them); empty when every check passed.' })
  failing!: string[];

  @Field(() => Boolean, { description: 'Every check passed: installs may start.' })
  ready!: boolean;
}

@ObjectType('HostMinimums', { description: 'What every host added to the cluster must have at least; zero asks nothing.' })
export class HostMinimumsType {
  @Field(() => Int)
  cpus!: number;

  @Field(() => Float, { description: 'MemTotal, in bytes.' })
  memoryBytes!: number;

  @Field(() => Float, { description: 'The host\'s largest disk, in bytes.' })
  diskBytes!: number;

  @Field(() => [String], { description: 'Label keys every host must be given when it is added (has-labels).' })
  labelKeys!: string[];
}

@InputType()
export class HostMinimumsInput {
  @Field(() => Int, { defaultValue: 0 })
  @Min(0)
  @Max(4096)
  cpus!: number;

  @Field(() => Float, { defaultValue: 0, description: 'MemTotal, in bytes.' })
  @Min(0)
  memoryBytes!: number;

  @Field(() => Float, { defaultValue: 0, description: 'The largest disk, in bytes.' })
  @Min(0)
  diskBytes!: number;

  @Field(() => [String], { defaultValue: [], description: 'Label keys every host must be given when it is added (a zone, a rack).' })
  @ArrayMaxSize(32)
  @Satisfies(checkLabelKey, { each: true })
  labelKeys!: string[];
}

/** A registered cluster. Its credentials are write-only and have no field here. */
@ObjectType('Cluster')
export class ClusterType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  apiServerUrl!: string;

  @Field(() => String)
  vip!: string;

  @Field(() => Boolean, { description: 'Whether the auto-approver signs CSRs that pass every policy check.' })
  csrAutoApprove!: boolean;

  @Field(() => Boolean, {
    description: 'Whether the auto-approver approves serving-certificate renewals of nodes this service joined that pass the renewal policy. Independent of csrAutoApprove (join approval); on by default.',
  })
  autoApproveRenewals!: boolean;

  @Field(() => BootstrapStyleEnum)
  bootstrapStyle!: BootstrapStyle;

  @Field(() => Boolean, { description: 'Whether plain HTTP or unverified TLS to the API server was allowed at registration.' })
  allowInsecureTransport!: boolean;

  @Field(() => String, { description: 'KUBECONFIG or TOKEN: how the service authenticates (never the credential itself).' })
  credentialKind!: string;

  @Field(() => ClusterReadinessType, {
    nullable: true,
    description: 'The last readiness check (run by clusterChecks, by the cluster page and by `ccos-scaler clusters check`); null before the first. While it names failed checks, installNode checks again and is refused if they still fail.',
  })
  readiness!: ClusterReadinessType | null;

  @Field(() => Int, { description: 'Installs that run at once on this cluster; more wait their turn (setClusterInstallsAtOnce).' })
  installsAtOnce!: number;

  @Field(() => Boolean, {
    description: 'Four-eyes: forced or ungraceful removals, removals going on without their host, forced drains, forced CSR approvals and rollouts wait for a second person\'s approval (setClusterFourEyes; approvalRequests).',
  })
  fourEyes!: boolean;

  @Field(() => HostMinimumsType, {
    nullable: true,
    description: 'What every host added to it must have at least (has-min-cpu-cores, has-min-memory, has-min-disk): a host below is PRECHECK_FAILED naming each failed check. Null asks nothing; a pool\'s profile asks its spares more.',
  })
  hostMinimums!: HostMinimumsType | null;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt!: Date;
}
