import { randomBytes, randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import type { ClusterStore, WebhookEndpointRecord, WebhookStore } from '@ccos/api/data-access-db';
import { type ClusterAddressGuard, resolveClusterHost } from '@ccos/api/data-access-kube';
import { BadUserInputError, NotFoundError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { message } from '@ccos/shared/messages';
import { WEBHOOK_SECRET_PURPOSE } from './webhook-dispatcher';

/** A new endpoint and its secret, which is shown this once. */
export interface CreatedEndpoint {
  readonly endpoint: WebhookEndpointRecord;
  readonly secret: string;
}

/** Longest description kept. */
const MAX_DESCRIPTION = 200;

/**
 * A cluster's webhook endpoints: created by an ADMIN with a URL the cluster address policy allows
 * (checked now, and again on every connection), each with a secret of its own that signs every
 * delivery; the secret is generated here, sealed at rest and shown once.
 */
export class WebhookService {
  constructor(
    private readonly store: WebhookStore,
    private readonly clusters: Pick<ClusterStore, 'get'>,
    private readonly secrets: SecretBox,
    private readonly addresses: ClusterAddressGuard,
  ) {}

  async create(input: { readonly clusterId: string; readonly url: string; readonly description?: string | null }, actor: string): Promise<CreatedEndpoint> {
    const cluster = await this.clusters.get(input.clusterId);
    const url = input.url.trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      parsed = null;
    }
    if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.username || parsed.password) {
      throw new BadUserInputError('input.url', message('webhook.badUrl'));
    }
    const host = await resolveClusterHost(url, this.addresses, dnsLookup, 'webhook');
    if (!host.ok) {
      throw new BadUserInputError('input.url', host.coded);
    }
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    const endpoint = await this.store.create({
      id: randomUUID(),
      clusterId: cluster.id,
      url,
      description: (input.description ?? '').trim().slice(0, MAX_DESCRIPTION),
      secretSealed: this.secrets.seal(secret, WEBHOOK_SECRET_PURPOSE),
      createdBy: actor,
    });
    return { endpoint, secret };
  }

  /** The cluster's endpoints; NOT_FOUND for a cluster that does not exist. */
  async list(clusterId: string): Promise<WebhookEndpointRecord[]> {
    await this.clusters.get(clusterId);
    return this.store.ofCluster(clusterId);
  }

  async get(id: string): Promise<WebhookEndpointRecord> {
    const endpoint = await this.store.find(id);
    if (!endpoint) {
      throw new NotFoundError('WebhookEndpoint', id);
    }
    return endpoint;
  }

  async delete(id: string): Promise<WebhookEndpointRecord> {
    const endpoint = await this.get(id);
    await this.store.delete(id);
    return endpoint;
  }
}
