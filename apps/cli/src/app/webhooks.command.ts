import { CreateWebhookEndpointDocument, DeleteWebhookEndpointDocument, WebhookDeliveriesDocument, WebhookEndpointsDocument, type WebhookEndpointFieldsFragment } from '@ccos/shared/api-schema';
import { type CommandSpec, clusterListCommand, integerFlag, printJson, resolveCluster, stringFlag, usageError } from './command';
import { EXIT } from './exit-codes';
import { columnTitles } from './messages';
import { table } from './output';

/** `webhooks list [--cluster C]`: the cluster's receivers of node events, with how their deliveries go. */
export const WEBHOOKS_LIST: CommandSpec = clusterListCommand<WebhookEndpointFieldsFragment>({
  fetch: async (context, clusterId) => (await context.api().request(WebhookEndpointsDocument, { clusterId })).webhookEndpoints,
  columns: ['ID', 'URL', 'DESCRIPTION', 'LAST DELIVERED', 'FAILURES', 'REASON'],
  row: (endpoint) => [endpoint.id, endpoint.url, endpoint.description, endpoint.lastDeliveredAt ?? '-', endpoint.failures, endpoint.lastError ?? ''],
});

/** `webhooks add --url URL [--description TEXT] [--cluster C]`: a new receiver; its signing secret is printed this once. */
export const WEBHOOKS_ADD: CommandSpec = {
  options: { cluster: { type: 'string' }, url: { type: 'string' }, description: { type: 'string' } },
  positionals: [],
  async run(context) {
    const url = stringFlag(context, 'url');
    if (!url) {
      throw usageError(context.t, context.t('webhookUrlMissing'));
    }
    const cluster = await resolveCluster(context);
    const { createWebhookEndpoint } = await context.api().request(CreateWebhookEndpointDocument, { input: { clusterId: cluster.id, url, description: stringFlag(context, 'description') ?? null } });
    if (context.output !== 'table') {
      printJson(context, createWebhookEndpoint);
      return EXIT.ok;
    }
    context.io.out(context.t('webhookSecret', { id: createWebhookEndpoint.endpoint.id, secret: createWebhookEndpoint.secret }));
    return EXIT.ok;
  },
};

/** `webhooks remove ENDPOINT`. */
export const WEBHOOKS_REMOVE: CommandSpec = {
  options: {},
  positionals: ['ENDPOINT'],
  async run(context) {
    const { deleteWebhookEndpoint } = await context.api().request(DeleteWebhookEndpointDocument, { id: context.positionals[0] ?? '' });
    if (context.output !== 'table') {
      printJson(context, deleteWebhookEndpoint);
      return EXIT.ok;
    }
    context.io.out(context.t('webhookRemoved', { id: deleteWebhookEndpoint.id, url: deleteWebhookEndpoint.url }));
    return EXIT.ok;
  },
};

/** `webhooks deliveries ENDPOINT [--limit N]`: the latest attempts, newest first. */
export const WEBHOOKS_DELIVERIES: CommandSpec = {
  options: { limit: { type: 'string' } },
  positionals: ['ENDPOINT'],
  async run(context) {
    const { webhookDeliveries } = await context.api().request(WebhookDeliveriesDocument, { endpointId: context.positionals[0] ?? '', first: integerFlag(context, 'limit') ?? 50 });
    if (context.output !== 'table') {
      printJson(context, webhookDeliveries);
      return EXIT.ok;
    }
    const c = columnTitles(context.language);
    context.io.out(
      table(
        [c['AT'], c['EVENT'], c['TYPE'], c['RESULT'], c['ANSWER'], c['MS']].map(String),
        webhookDeliveries.map((delivery) => [delivery.attemptedAt, delivery.eventId, delivery.eventType, delivery.ok ? 'OK' : 'FAILED', delivery.statusCode === null || delivery.statusCode === undefined ? (delivery.error ?? '') : String(delivery.statusCode), delivery.durationMs]),
      ),
    );
    return EXIT.ok;
  },
};
