import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal } from '@angular/core';
import { type CreatedWebhookEndpoint, ErrorReporter, Notifications, Session, type WebhookEndpoint, WebhookEndpointsStore } from '@ccos/console/data-access';
import { ButtonDirective, StatusBadgeComponent, TextFieldComponent } from '@ccos/console/ui';
import { I18n } from '@ccos/console/util-i18n';
import { clustersMessages } from '../clusters.messages';

/**
 * The cluster's webhook receivers on its page: each with how its deliveries go and its latest
 * attempts on demand; an ADMIN adds one (its secret shown once) or removes one.
 */
@Component({
  selector: 'ccos-webhooks-card',
  imports: [ButtonDirective, StatusBadgeComponent, TextFieldComponent],
  providers: [WebhookEndpointsStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <section class="ccos-card" aria-labelledby="webhooks-heading" data-testid="webhooks">
      <h2 id="webhooks-heading">{{ t('webhooks.heading') }}</h2>
      <p class="explain">{{ t('webhooks.explain') }}</p>
      @if (problem(); as text) {
        <p class="ccos-muted">{{ text }}</p>
      }
      @if (created(); as fresh) {
        <div class="secret" role="status" data-testid="webhook-secret">
          <p>{{ t('webhooks.secret', { url: fresh.endpoint.url }) }}</p>
          <code>{{ fresh.secret }}</code>
          <button ccosButton="secondary" type="button" (click)="created.set(null)">{{ t('webhooks.secretDone') }}</button>
        </div>
      }
      <ul class="endpoints">
        @for (endpoint of store.endpoints(); track endpoint.id) {
          <li data-testid="webhook-endpoint" [attr.data-endpoint]="endpoint.id">
            <div class="row">
              <code class="url">{{ endpoint.url }}</code>
              @if (endpoint.description) {
                <span class="ccos-muted">{{ endpoint.description }}</span>
              }
              <ccos-status-badge [tone]="endpoint.failures > 0 ? 'error' : 'ok'">{{ standing(endpoint) }}</ccos-status-badge>
              <button ccosButton="secondary" type="button" (click)="toggle(endpoint.id)" [attr.aria-expanded]="store.openedEndpoint() === endpoint.id">
                {{ store.openedEndpoint() === endpoint.id ? t('webhooks.hideDeliveries') : t('webhooks.showDeliveries') }}
              </button>
              @if (isAdmin()) {
                <button ccosButton="danger" type="button" (click)="remove(endpoint)">{{ t('webhooks.remove') }}</button>
              }
            </div>
            @if (store.openedEndpoint() === endpoint.id) {
              <table class="ccos-table" data-testid="webhook-deliveries" [attr.aria-label]="t('webhooks.deliveries', { url: endpoint.url })">
                <thead>
                  <tr><th>{{ t('webhooks.col.at') }}</th><th>{{ t('webhooks.col.event') }}</th><th>{{ t('webhooks.col.result') }}</th><th>{{ t('webhooks.col.ms') }}</th></tr>
                </thead>
                <tbody>
                  @for (delivery of store.deliveries(); track $index) {
                    <tr [attr.data-ok]="delivery.ok">
                      <td>{{ i18n.formatDateTime(delivery.attemptedAt) }}</td>
                      <td>{{ delivery.eventType }} <span class="ccos-muted">#{{ delivery.eventSequence }}</span></td>
                      <td>{{ delivery.ok ? t('webhooks.ok') : t('webhooks.failed') }} {{ delivery.statusCode ?? '' }} {{ delivery.error ?? '' }}</td>
                      <td>{{ delivery.durationMs }}</td>
                    </tr>
                  } @empty {
                    <tr><td colspan="4" class="ccos-muted">{{ t('webhooks.noDeliveries') }}</td></tr>
                  }
                </tbody>
              </table>
            }
          </li>
        } @empty {
          <li class="ccos-muted">{{ t('webhooks.none') }}</li>
        }
      </ul>
      @if (isAdmin()) {
        <form class="add" (submit)="add($event)" [attr.aria-label]="t('webhooks.form')">
          <ccos-text-field name="url" [label]="t('webhooks.url')" [error]="store.fieldErrors()['url'] ?? null" [(value)]="url" />
          <ccos-text-field name="description" [label]="t('webhooks.description')" [error]="store.fieldErrors()['description'] ?? null" [(value)]="description" />
          <div class="ccos-actions">
            <button ccosButton="primary" type="submit" [busy]="store.sending()">{{ t('webhooks.add') }}</button>
          </div>
        </form>
      }
    </section>
  `,
  styles: `
    .explain { color: var(--ccos-text-muted); }
    .endpoints { list-style: none; padding: 0; display: grid; gap: 0.75rem; }
    .row { display: flex; align-items: center; gap: 0.75rem; flex-wrap: wrap; }
    .url { overflow-wrap: anywhere; }
    .secret { padding: 0.5rem 0.75rem; border-left: 3px solid var(--ccos-warn, #b45309); background: var(--ccos-surface-muted, #fffbeb); display: grid; gap: 0.5rem; }
    .secret code { overflow-wrap: anywhere; }
    .add { display: grid; gap: 0.75rem; margin-top: 0.75rem; }
  `,
})
export class WebhooksCardComponent {
  readonly clusterId = input.required<string>();

  private readonly session = inject(Session);
  private readonly errors = inject(ErrorReporter);
  private readonly notifications = inject(Notifications);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(clustersMessages);
  protected readonly store = inject(WebhookEndpointsStore);
  protected readonly isAdmin = computed(() => this.session.allows('ADMIN'));
  protected readonly url = signal('');
  protected readonly description = signal('');
  /** The endpoint just added, with its secret, until the ADMIN says it is kept. */
  protected readonly created = signal<CreatedWebhookEndpoint | null>(null);
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  constructor() {
    effect(() => this.store.select(this.clusterId()));
  }

  protected standing(endpoint: WebhookEndpoint): string {
    if (endpoint.failures > 0) {
      return this.t('webhooks.failing', {
        failures: endpoint.failures,
        since: this.i18n.formatDateTime(endpoint.failingSince),
        error: endpoint.lastError ?? '',
        next: this.i18n.formatDateTime(endpoint.retryAt),
      });
    }
    return endpoint.lastDeliveredAt ? this.t('webhooks.lastDelivered', { when: this.i18n.formatDateTime(endpoint.lastDeliveredAt) }) : this.t('webhooks.never');
  }

  protected toggle(endpointId: string): void {
    this.store.open(this.store.openedEndpoint() === endpointId ? null : endpointId);
  }

  protected async add(event: Event): Promise<void> {
    event.preventDefault();
    const outcome = await this.store.add(this.clusterId(), this.url().trim(), this.description().trim());
    if (outcome.ok) {
      this.created.set(outcome.value);
      this.url.set('');
      this.description.set('');
      this.notifications.show('success', () => this.t('webhooks.added'));
    }
  }

  protected async remove(endpoint: WebhookEndpoint): Promise<void> {
    const outcome = await this.store.remove(endpoint.id);
    if (outcome.ok) {
      this.notifications.show('success', () => this.t('webhooks.removed'));
    }
  }
}
