export { createWebhooksFeature, type WebhooksFeature, type WebhooksFeatureOptions } from './lib/webhooks-feature';
export { WebhookResolver } from './lib/webhook.resolver';
export { DELIVER_TASK, type WebhookEvent } from './lib/webhook-dispatcher';
export { SIGNATURE_HEADER, signWebhook, verifyWebhook } from './lib/webhook-signature';
