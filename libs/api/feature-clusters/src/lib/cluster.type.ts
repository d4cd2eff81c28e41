import { Field, GraphQLISODateTime, ID, ObjectType } from 'type-graphql';
import type { BootstrapStyle } from '@ccos/api/data-access-db';
import { BootstrapStyleEnum } from '@ccos/api/util-graphql';

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

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt!: Date;
}
