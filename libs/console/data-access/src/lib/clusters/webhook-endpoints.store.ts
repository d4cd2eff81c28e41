import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import {
  CreateWebhookEndpointDocument,
  type CreateWebhookEndpointMutation,
  DeleteWebhookEndpointDocument,
  WebhookDeliveriesDocument,
  type WebhookDeliveriesQuery,
  WebhookEndpointsDocument,
  type WebhookEndpointFieldsFragment,
} from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type WebhookEndpoint = WebhookEndpointFieldsFragment;
export type WebhookDelivery = WebhookDeliveriesQuery['webhookDeliveries'][number];
export type CreatedWebhookEndpoint = CreateWebhookEndpointMutation['createWebhookEndpoint'];

/**
 * A cluster's webhook endpoints, adding one (ADMIN: its secret is in the answer, this once) and
 * removing one, and the delivery log of the endpoint opened. Provide it where the cluster's page
 * shows them.
 */
@Injectable()
export class WebhookEndpointsStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(WebhookEndpointsDocument);
  private readonly deliveriesQuery = liveQuery(WebhookDeliveriesDocument);
  private readonly adding = new FormSubmission();
  private readonly removing = new FormSubmission();
  private readonly opened = signal<string | null>(null);

  readonly endpoints = computed(() => this.query.data()?.webhookEndpoints ?? []);
  readonly problems = this.query.problems;
  readonly sending = this.adding.sending;
  readonly fieldErrors = this.adding.fieldErrors;
  readonly openedEndpoint = this.opened.asReadonly();
  readonly deliveries = computed(() => (this.opened() ? (this.deliveriesQuery.data()?.webhookDeliveries ?? []) : []));

  select(clusterId: string): void {
    this.query.watch({ clusterId });
  }

  /** Shows the endpoint's latest attempts (null: none), and reads how each endpoint stands again. */
  open(endpointId: string | null): void {
    this.opened.set(endpointId);
    if (endpointId) {
      this.deliveriesQuery.watch({ endpointId, first: 50 });
      this.deliveriesQuery.refetch();
    }
    this.query.refetch();
  }

  reload(): void {
    this.query.refetch();
    if (this.opened()) {
      this.deliveriesQuery.refetch();
    }
  }

  add(clusterId: string, url: string, description: string): Promise<Outcome<CreatedWebhookEndpoint>> {
    return this.adding.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: CreateWebhookEndpointDocument, variables: { input: { clusterId, url, description: description || null } }, context: { errorDisplay: 'fields' } }));
      if (result.data?.createWebhookEndpoint) {
        this.query.refetch();
      }
      return { value: result.data?.createWebhookEndpoint, error: result.error };
    });
  }

  remove(endpointId: string): Promise<Outcome<WebhookEndpoint>> {
    return this.removing.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: DeleteWebhookEndpointDocument, variables: { id: endpointId } }));
      if (result.data?.deleteWebhookEndpoint) {
        if (this.opened() === endpointId) {
          this.opened.set(null);
        }
        this.query.refetch();
      }
      return { value: result.data?.deleteWebhookEndpoint, error: result.error };
    });
  }
}
