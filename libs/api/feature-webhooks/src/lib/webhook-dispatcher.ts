import type { Logger } from 'pino';
import { type JobRegistry, type NodeTransitionRecord, PeriodicQueueing, type WebhookEndpointRecord, type WebhookStore } from '@ccos/api/data-access-db';
import type { SecretBox } from '@ccos/api/util-secrets';
import { webhookEventType } from '@ccos/shared/domain';
import { formatServerText } from '@ccos/shared/messages';
import type { Clock } from '@ccos/shared/util-timing';
import type { WebhookSend } from './webhook-sender';
import { SIGNATURE_HEADER, signWebhook } from './webhook-signature';

/** The job that delivers an endpoint's pending events in order (payload: `endpointId`). */
export const DELIVER_TASK = 'webhook.deliver';
/** What the endpoint's secret is sealed for. */
export const WEBHOOK_SECRET_PURPOSE = 'webhook-secret';
/** Transitions read at a time. */
const PAGE = 200;
/** A missing number in the transitions' sequence younger than this may belong to a transaction still committing: wait for it. */
const GAP_WAIT_MS = 5000;
/** After a failure the next attempt waits 1 s, doubling to this. */
const MAX_RETRY_MS = 60_000;
/** Transitions and attempts kept (those every endpoint has handled). */
const KEPT_MS = 30 * 24 * 3600_000;

/**
 * The body of a delivery: one node's change of status, or what waits (`drain.blocked`: the
 * budget and pod in `detail`; `csr.pending`: the CSR, its requester and since when, and a node
 * id only when this service has a record of that node). For those the state is the node's now.
 */
export interface WebhookEvent {
  readonly id: string;
  readonly type: string;
  readonly sequence: number;
  readonly occurred_at: string;
  readonly cluster: { readonly id: string; readonly name: string };
  readonly node: { readonly id: string | null; readonly hostname: string };
  readonly old_state: string | null;
  readonly new_state: string;
  readonly reason: { readonly code: string | null; readonly params: unknown; readonly message: string | null } | null;
  readonly detail?: Record<string, unknown>;
}

export interface WebhookDispatcherOptions {
  readonly store: WebhookStore;
  readonly jobs: JobRegistry;
  readonly secrets: SecretBox;
  readonly send: WebhookSend;
  /** A cluster's name, for the payload. */
  readonly clusterName: (clusterId: string) => Promise<string>;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How often the endpoints behind are looked for (every API process). Default 2 s. */
  readonly sweepMs?: number;
}

/**
 * Delivers each cluster's node transitions (and the waits recorded beside them) to its webhook endpoints, in the order they were
 * recorded, each at least once: a `webhook.deliver` job per endpoint, on a queue of its own, posts
 * what lies past the endpoint's cursor and moves the cursor after each delivery. A receiver that
 * fails is tried again after 1 s, doubling to 60 s, from the event it failed on, for as long as it
 * takes: nothing is skipped. Every API process looks for endpoints behind every `sweepMs`.
 */
export class WebhookDispatcher {
  private readonly sweep: PeriodicQueueing;
  private lastPrune = 0;

  constructor(private readonly options: WebhookDispatcherOptions) {
    options.jobs.register(DELIVER_TASK, async (payload) => this.deliver(String(payload['endpointId'])));
    this.sweep = new PeriodicQueueing(options.sweepMs ?? 2000, () => this.queueBehind(), (error) => options.logger.warn({ err: error }, 'could not look for webhook endpoints with events to deliver'));
  }

  start(): void {
    this.sweep.start();
  }

  stop(): void {
    this.sweep.stop();
  }

  /** Queues a delivery job for every endpoint with events past its cursor and no retry waiting. */
  async queueBehind(): Promise<number> {
    const ids = await this.options.store.behind();
    for (const id of ids) {
      await this.queue(id);
    }
    if (this.options.clock.now() - this.lastPrune > 3600_000) {
      this.lastPrune = this.options.clock.now();
      await this.options.store.prune(new Date(this.options.clock.now() - KEPT_MS));
    }
    return ids.length;
  }

  queue(endpointId: string, runAt?: Date): Promise<void> {
    return this.options.jobs.enqueue(DELIVER_TASK, { endpointId }, { key: `${DELIVER_TASK}:${endpointId}`, queue: `webhook:${endpointId}`, maxAttempts: 3, ...(runAt ? { runAt } : {}) });
  }

  /** The job: delivers what lies past the endpoint's cursor, in order, until none is left, a gap may still fill, or the receiver fails. */
  async deliver(endpointId: string): Promise<void> {
    const endpoint = await this.options.store.find(endpointId);
    if (!endpoint) {
      return;
    }
    let cursor = endpoint.deliveredSeq;
    let secret: string | null = null;
    let clusterName: string | null = null;
    for (;;) {
      const page = await this.options.store.transitionsAfter(cursor, PAGE);
      if (page.length === 0) {
        return;
      }
      for (const transition of page) {
        if (transition.seq !== cursor + 1 && this.options.clock.now() - transition.occurredAt.getTime() < GAP_WAIT_MS) {
          // An earlier number may still commit: handled up to here, the rest in a moment.
          await this.options.store.advance(endpoint.id, cursor, false);
          await this.queue(endpoint.id, new Date(this.options.clock.now() + 1000));
          return;
        }
        if (transition.clusterId === endpoint.clusterId) {
          secret ??= this.options.secrets.open(endpoint.secretSealed, WEBHOOK_SECRET_PURPOSE);
          clusterName ??= await this.options.clusterName(endpoint.clusterId);
          if (!(await this.post(endpoint, secret, this.eventOf(transition, clusterName)))) {
            await this.options.store.advance(endpoint.id, cursor, false);
            return;
          }
          await this.options.store.advance(endpoint.id, transition.seq, true);
        }
        cursor = transition.seq;
      }
      await this.options.store.advance(endpoint.id, cursor, false);
    }
  }

  /** One attempt, logged; on failure the endpoint's next attempt is scheduled. */
  private async post(endpoint: WebhookEndpointRecord, secret: string, event: WebhookEvent): Promise<boolean> {
    const body = JSON.stringify(event);
    const timestamp = Math.floor(this.options.clock.now() / 1000);
    const outcome = await this.options.send({
      url: endpoint.url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'ccos-scaler-webhooks',
        'x-event-id': event.id,
        'x-event-type': event.type,
        [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
      },
    });
    await this.options.store.recordDelivery({ endpointId: endpoint.id, eventSeq: event.sequence, eventId: event.id, eventType: event.type, ok: outcome.ok, statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs });
    if (outcome.ok) {
      return true;
    }
    const waitMs = Math.min(MAX_RETRY_MS, 1000 * 2 ** Math.min(endpoint.failures, 6));
    const retryAt = new Date(this.options.clock.now() + waitMs);
    await this.options.store.failed(endpoint.id, outcome.error ?? 'failed', retryAt);
    await this.queue(endpoint.id, retryAt);
    this.options.logger.info({ endpointId: endpoint.id, eventSeq: event.sequence, error: outcome.error, retryInMs: waitMs }, 'a webhook delivery failed; trying again later');
    return false;
  }

  private eventOf(transition: NodeTransitionRecord, clusterName: string): WebhookEvent {
    const coded = transition.reasonCoded;
    return {
      id: transition.eventId,
      type: transition.eventType ?? webhookEventType(transition.oldStatus, transition.newStatus),
      sequence: transition.seq,
      occurred_at: transition.occurredAt.toISOString(),
      cluster: { id: transition.clusterId, name: clusterName },
      node: { id: transition.nodeId, hostname: transition.hostname },
      old_state: transition.oldStatus,
      new_state: transition.newStatus,
      reason: transition.reason === null && coded === null ? null : { code: coded?.code ?? null, params: coded?.params ?? null, message: coded ? formatServerText('en', coded.code, coded.params, transition.reason) : transition.reason },
      ...(transition.detail ? { detail: transition.detail } : {}),
    };
  }
}
