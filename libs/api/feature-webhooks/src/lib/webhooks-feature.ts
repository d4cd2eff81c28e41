import type { Logger } from 'pino';
import type { ClusterStore, JobRegistry, WebhookStore } from '@ccos/api/data-access-db';
import type { ClusterAddressGuard } from '@ccos/api/data-access-kube';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type Clock, SystemClock } from '@ccos/shared/util-timing';
import { WebhookDispatcher } from './webhook-dispatcher';
import { type WebhookSend, httpWebhookSender } from './webhook-sender';
import { WebhookResolver } from './webhook.resolver';
import { WebhookService } from './webhook.service';

export interface WebhooksFeatureOptions {
  readonly store: WebhookStore;
  readonly clusters: Pick<ClusterStore, 'get'>;
  readonly jobs: JobRegistry;
  readonly secrets: SecretBox;
  /** The cluster address policy (ALLOW_CLUSTER_ADDRESSES): receivers are held to it too. */
  readonly addresses: ClusterAddressGuard;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** How deliveries are posted; default HTTP(S) under `addresses`. */
  readonly send?: WebhookSend;
  readonly sweepMs?: number;
}

export interface WebhooksFeature {
  readonly service: WebhookService;
  readonly dispatcher: WebhookDispatcher;
  readonly resolver: WebhookResolver;
  /** Looks for endpoints with events to deliver (the API processes). */
  start(): void;
  stop(): void;
}

export function createWebhooksFeature(options: WebhooksFeatureOptions): WebhooksFeature {
  const service = new WebhookService(options.store, options.clusters, options.secrets, options.addresses);
  const dispatcher = new WebhookDispatcher({
    store: options.store,
    jobs: options.jobs,
    secrets: options.secrets,
    send: options.send ?? httpWebhookSender(options.addresses),
    clusterName: async (clusterId) => (await options.clusters.get(clusterId)).name,
    logger: options.logger.child({ component: 'webhooks' }),
    clock: options.clock ?? new SystemClock(),
    sweepMs: options.sweepMs,
  });
  return { service, dispatcher, resolver: new WebhookResolver(service, options.store), start: () => dispatcher.start(), stop: () => dispatcher.stop() };
}
