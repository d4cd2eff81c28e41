import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType('ApprovalRequest', { description: 'An action held for a second person\'s approval (four-eyes), and how it was decided.' })
export class ApprovalRequestType {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  clusterId!: string;

  @Field(() => String, { description: 'REMOVE_NODE (forced or ungraceful), SKIP_REMOVAL_HOST_SIDE, FORCE_REMOVAL_DRAIN, FORCE_APPROVE_CSR or START_ROLLOUT.' })
  action!: string;

  @Field(() => String, { description: 'What it acts on: a host name, a CSR name.' })
  target!: string;

  @Field(() => GraphQLJSONObject, { description: 'The arguments it runs with, as its requester asked.' })
  params!: Record<string, unknown>;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'What it would do, as its requester saw it (a removal\'s pods, budgets and safety checks).' })
  preview!: Record<string, unknown> | null;

  @Field(() => String)
  requestedBy!: string;

  @Field(() => Date)
  requestedAt!: Date;

  @Field(() => Date)
  expiresAt!: Date;

  @Field(() => String, { description: 'PENDING, APPROVED (and run), FAILED (approved, running it failed), REJECTED or EXPIRED.' })
  status!: string;

  @Field(() => String, { nullable: true })
  decidedBy!: string | null;

  @Field(() => Date, { nullable: true })
  decidedAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why it was rejected.' })
  decisionReason!: string | null;

  @Field(() => String, { nullable: true, description: 'What running it did, or why it failed.' })
  outcome!: string | null;

  @Field(() => String, { nullable: true })
  outcomeCode!: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  outcomeParams!: Record<string, unknown> | null;
}
