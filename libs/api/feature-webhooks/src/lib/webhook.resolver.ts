import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { WebhookDeliveryRecord, WebhookEndpointRecord, WebhookStore } from '@ccos/api/data-access-db';
import { type RequestContext, actorOf } from '@ccos/api/util-graphql';
import type { WebhookService } from './webhook.service';
import { CreateWebhookEndpointInput, CreatedWebhookEndpointType, WebhookDeliveryType, WebhookEndpointType } from './webhook.types';

/** Attempts listed at most. */
const MAX_DELIVERIES = 500;

@Resolver()
export class WebhookResolver {
  constructor(
    private readonly webhooks: WebhookService,
    private readonly store: Pick<WebhookStore, 'deliveries'>,
  ) {}

  @Authorized('VIEWER')
  @Query(() => [WebhookEndpointType], { description: 'The cluster\'s webhook endpoints (never their secrets).' })
  async webhookEndpoints(@Arg('clusterId', () => ID) clusterId: string): Promise<WebhookEndpointType[]> {
    return (await this.webhooks.list(clusterId)).map(toEndpointType);
  }

  @Authorized('VIEWER')
  @Query(() => [WebhookDeliveryType], { description: 'The endpoint\'s latest delivery attempts, newest first.' })
  async webhookDeliveries(@Arg('endpointId', () => ID) endpointId: string, @Arg('first', () => Int, { defaultValue: 50 }) first: number): Promise<WebhookDeliveryType[]> {
    await this.webhooks.get(endpointId);
    return (await this.store.deliveries(endpointId, Math.max(1, Math.min(first, MAX_DELIVERIES)))).map(toDeliveryType);
  }

  @Authorized('ADMIN')
  @Mutation(() => CreatedWebhookEndpointType, { description: 'Adds a receiver of the cluster\'s node events, from now on; answers its signing secret, this once.' })
  async createWebhookEndpoint(@Arg('input', () => CreateWebhookEndpointInput) input: CreateWebhookEndpointInput, @Ctx() context: RequestContext): Promise<CreatedWebhookEndpointType> {
    const created = await this.webhooks.create(input, actorOf(context));
    return { endpoint: toEndpointType(created.endpoint), secret: created.secret };
  }

  @Authorized('ADMIN')
  @Mutation(() => WebhookEndpointType, { description: 'Removes a receiver: nothing more is sent to it, and its delivery log goes with it.' })
  async deleteWebhookEndpoint(@Arg('id', () => ID) id: string): Promise<WebhookEndpointType> {
    return toEndpointType(await this.webhooks.delete(id));
  }
}

function toEndpointType(endpoint: WebhookEndpointRecord): WebhookEndpointType {
  const { secretSealed: _sealed, deliveredSeq: _cursor, ...shown } = endpoint;
  return shown;
}

function toDeliveryType(delivery: WebhookDeliveryRecord): WebhookDeliveryType {
  return {
    eventId: delivery.eventId,
    eventSequence: delivery.eventSeq,
    eventType: delivery.eventType,
    ok: delivery.ok,
    statusCode: delivery.statusCode,
    error: delivery.error,
    durationMs: delivery.durationMs,
    attemptedAt: delivery.attemptedAt,
  };
}
