import { IsOptional, MaxLength } from 'class-validator';
import { Field, Float, GraphQLISODateTime, ID, InputType, Int, ObjectType } from 'type-graphql';
import { coded } from '@ccos/api/util-graphql';

@InputType('CreateWebhookEndpointInput')
export class CreateWebhookEndpointInput {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => String, { description: 'Where each event of the cluster\'s nodes is POSTed (http:// or https://), under the same address policy as clusters (ALLOW_CLUSTER_ADDRESSES).' })
  @MaxLength(2048, coded('validation.tooLarge', { kib: 2 }))
  url!: string;

  @Field(() => String, { nullable: true, description: 'What the receiver is, for the people who read the list.' })
  @IsOptional()
  @MaxLength(200, coded('validation.tooLarge', { kib: 1 }))
  description?: string | null;
}

@ObjectType('WebhookEndpoint', { simpleResolvers: true, description: 'A receiver of a cluster\'s node events: every change of a node\'s status, in order, each signed with the endpoint\'s secret (X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">).' })
export class WebhookEndpointType {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  clusterId!: string;

  @Field(() => String)
  url!: string;

  @Field(() => String)
  description!: string;

  @Field(() => String)
  createdBy!: string;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => GraphQLISODateTime, { nullable: true })
  lastDeliveredAt!: Date | null;

  @Field(() => Int, { description: 'Attempts that failed in a row; the next waits 1 s, doubling to 60 s, and starts from the event that failed.' })
  failures!: number;

  @Field(() => GraphQLISODateTime, { nullable: true })
  failingSince!: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  retryAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why the last attempt failed.' })
  lastError!: string | null;
}

@ObjectType('CreatedWebhookEndpoint', { simpleResolvers: true })
export class CreatedWebhookEndpointType {
  @Field(() => WebhookEndpointType)
  endpoint!: WebhookEndpointType;

  @Field(() => String, { description: 'The secret that signs the deliveries. Shown this once: keep it in the receiver\'s configuration.' })
  secret!: string;
}

@ObjectType('WebhookDelivery', { simpleResolvers: true, description: 'One attempt to deliver an event to an endpoint.' })
export class WebhookDeliveryType {
  @Field(() => ID)
  eventId!: string;

  @Field(() => Float, { description: 'The event\'s place in the order of every node event of the service.' })
  eventSequence!: number;

  @Field(() => String, { description: 'node.added, install.started, install.joined, install.failed, removal.started, removal.done, removal.failed or node.changed.' })
  eventType!: string;

  @Field(() => Boolean)
  ok!: boolean;

  @Field(() => Int, { nullable: true })
  statusCode!: number | null;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => Int)
  durationMs!: number;

  @Field(() => GraphQLISODateTime)
  attemptedAt!: Date;
}
