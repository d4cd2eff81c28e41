import type { Logger } from 'pino';
import type { ClusterStore, JobRegistry, WebhookStore } from '@ccos/api/data-access-db';
import type { ClusterAddressGuard, CsrSummary } from '@ccos/api/data-access-kube';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type Clock, SystemClock } from '@ccos/shared/util-timing';
import { CsrWaitWatch } from './csr-wait-watch';
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
  /** A cluster's CSRs as its watch holds them, for `csr.pending` events (none are raised without). */
  readonly csrs?: (clusterId: string) => Promise<readonly CsrSummary[] | null>;
  /** How long a CSR is pending before the cluster's webhooks hear of it. Default 10 minutes. */
  readonly csrPendingMs?: number;
  /** How often the clusters' CSRs are looked at for that. Default 30 s. */
  readonly csrCheckMs?: number;
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
  const csrs = options.csrs;
  const csrWaits = csrs
    ? new CsrWaitWatch({ store: options.store, csrs, pendingMs: options.csrPendingMs ?? 10 * 60_000, clock: options.clock ?? new SystemClock(), logger: options.logger.child({ component: 'webhooks' }), everyMs: options.csrCheckMs })
    : null;
  return {
    service,
    dispatcher,
    resolver: new WebhookResolver(service, options.store),
    start: () => {
      dispatcher.start();
      csrWaits?.start();
    },
    stop: () => {
      csrWaits?.stop();
      dispatcher.stop();
    },
  };
}
