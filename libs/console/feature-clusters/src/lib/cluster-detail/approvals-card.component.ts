import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal } from '@angular/core';
import { type ApprovalRequestView, ClusterApprovalsStore, ErrorReporter, Notifications, Session } from '@ccos/console/data-access';
import { ButtonDirective, StatusBadgeComponent, SwitchComponent, TextFieldComponent } from '@ccos/console/ui';
import { I18n } from '@ccos/console/util-i18n';
import { APPROVAL_ACTIONS, APPROVAL_ROLE, type ApprovalAction } from '@ccos/shared/domain';
import { clustersMessages } from '../clusters.messages';

const ACTIONS: readonly string[] = APPROVAL_ACTIONS;

/**
 * Four-eyes on the cluster's page: the switch (ADMIN), the actions held for a second person with
 * what each would do, live, approved or rejected here by someone other than their requester, and
 * the latest decisions.
 */
@Component({
  selector: 'ccos-approvals-card',
  imports: [ButtonDirective, StatusBadgeComponent, SwitchComponent, TextFieldComponent],
  providers: [ClusterApprovalsStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <section class="ccos-card" aria-labelledby="approvals-heading" data-testid="approvals">
      <h2 id="approvals-heading">{{ t('approvals.heading') }}</h2>
      <p class="explain">{{ t('approvals.explain') }}</p>
      @if (isAdmin()) {
        <ccos-switch [label]="t('approvals.switch')" [checked]="fourEyes()" [disabled]="store.switchingFourEyes()" (toggleRequested)="setFourEyes($event)" />
      } @else {
        <p>{{ fourEyes() ? t('approvals.on') : t('approvals.off') }}</p>
      }
      @if (problem(); as text) {
        <p class="ccos-muted">{{ text }}</p>
      }
      <h3>{{ t('approvals.pending') }}</h3>
      <ul class="requests">
        @for (request of store.pending(); track request.id) {
          <li data-testid="approval-request" [attr.data-request]="request.id" [attr.data-action]="request.action">
            <div class="row">
              <strong>{{ actionText(request.action) }}</strong>
              <code>{{ request.target }}</code>
              <span class="ccos-muted">{{ t('approvals.asked', { who: request.requestedBy, at: i18n.formatDateTime(request.requestedAt), expires: i18n.formatDateTime(request.expiresAt) }) }}</span>
            </div>
            @if (previewLines(request); as lines) {
              @if (lines.length > 0) {
                <ul class="preview" [attr.aria-label]="t('approvals.preview')">
                  @for (line of lines; track $index) {
                    <li><code>{{ line }}</code></li>
                  }
                </ul>
              }
            }
            @if (mine(request)) {
              <p class="ccos-muted">{{ t('approvals.yours') }}</p>
            } @else if (mayDecide(request)) {
              <div class="row">
                <button ccosButton="primary" type="button" [busy]="store.busy() === request.id" (click)="approve(request)">{{ t('approvals.approve') }}</button>
                <ccos-text-field name="reason" [label]="t('approvals.reason')" [error]="rejecting() === request.id ? (store.fieldErrors()['reason'] ?? null) : null" [(value)]="reason" />
                <button ccosButton="danger" type="button" (click)="reject(request)">{{ t('approvals.reject') }}</button>
              </div>
            }
          </li>
        } @empty {
          <li class="ccos-muted">{{ store.loading() ? '' : t('approvals.none') }}</li>
        }
      </ul>
      @if (store.decided().length > 0) {
        <h3>{{ t('approvals.decided') }}</h3>
        <table class="ccos-table" data-testid="approval-decisions">
          <thead>
            <tr><th>{{ t('approvals.col.action') }}</th><th>{{ t('approvals.col.target') }}</th><th>{{ t('approvals.col.requester') }}</th><th>{{ t('approvals.col.status') }}</th><th>{{ t('approvals.col.decidedBy') }}</th><th>{{ t('approvals.col.outcome') }}</th></tr>
          </thead>
          <tbody>
            @for (request of store.decided().slice(0, 10); track request.id) {
              <tr [attr.data-status]="request.status">
                <td>{{ actionText(request.action) }}</td>
                <td><code>{{ request.target }}</code></td>
                <td>{{ request.requestedBy }}</td>
                <td><ccos-status-badge [tone]="request.status === 'APPROVED' ? 'ok' : request.status === 'FAILED' ? 'error' : 'neutral'">{{ statusText(request.status) }}</ccos-status-badge></td>
                <td>{{ request.decidedBy ?? '' }}</td>
                <td>{{ outcomeText(request) }}</td>
              </tr>
            }
          </tbody>
        </table>
      }
    </section>
  `,
  styles: `
    .explain { color: var(--ccos-text-muted); }
    .requests { list-style: none; padding: 0; display: grid; gap: 0.75rem; }
    .row { display: flex; align-items: center; gap: 0.75rem; flex-wrap: wrap; }
    .preview { margin: 0.25rem 0; padding-left: 1.25rem; }
  `,
})
export class ApprovalsCardComponent {
  readonly clusterId = input.required<string>();
  readonly fourEyes = input.required<boolean>();

  private readonly session = inject(Session);
  private readonly errors = inject(ErrorReporter);
  private readonly notifications = inject(Notifications);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(clustersMessages);
  protected readonly store = inject(ClusterApprovalsStore);
  protected readonly isAdmin = computed(() => this.session.allows('ADMIN'));
  protected readonly reason = signal('');
  protected readonly rejecting = signal<string | null>(null);
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  constructor() {
    effect(() => this.store.select(this.clusterId()));
  }

  protected actionText(action: string): string {
    return ACTIONS.includes(action) ? this.i18n.server(`approval.action.${action}`, {}, action) : action;
  }

  protected statusText(status: string): string {
    return this.t(`approvals.status.${status === 'APPROVED' || status === 'FAILED' || status === 'REJECTED' || status === 'EXPIRED' ? status : 'PENDING'}`);
  }

  protected outcomeText(request: ApprovalRequestView): string {
    if (request.status === 'REJECTED') {
      return request.decisionReason ?? '';
    }
    return request.outcomeCode ? this.i18n.server(request.outcomeCode, request.outcomeParams ?? {}, request.outcome ?? '') : (request.outcome ?? '');
  }

  /** What the held action would do, a line each: the pods its drains touch, the budgets they meet, the CSR's failed checks. */
  protected previewLines(request: ApprovalRequestView): string[] {
    const preview = (request.preview ?? {}) as Record<string, unknown>;
    const pods = Array.isArray(preview['pods']) ? (preview['pods'] as Array<{ pod?: string }>).map((pod) => pod.pod ?? '') : [];
    const budgets = Array.isArray(preview['budgets']) ? (preview['budgets'] as Array<{ name?: string; namespace?: string }>).map((budget) => `PodDisruptionBudget ${budget.namespace ?? ''}/${budget.name ?? ''}`) : [];
    const checks = Array.isArray(preview['failedChecks']) ? (preview['failedChecks'] as string[]).map((check) => `✗ ${check}`) : [];
    return [...pods, ...budgets, ...checks];
  }

  protected mine(request: ApprovalRequestView): boolean {
    return request.requestedBy === this.session.user()?.username;
  }

  protected mayDecide(request: ApprovalRequestView): boolean {
    return this.session.allows(APPROVAL_ROLE[request.action as ApprovalAction] ?? 'ADMIN');
  }

  protected async approve(request: ApprovalRequestView): Promise<void> {
    const outcome = await this.store.approve(request.id);
    if (outcome.ok) {
      const failed = outcome.value.status === 'FAILED';
      this.notifications.show(failed ? 'error' : 'success', () => (failed ? this.t('approvals.approvedFailed', { outcome: this.outcomeText(outcome.value) }) : this.t('approvals.approved', { target: request.target })));
    }
  }

  protected async reject(request: ApprovalRequestView): Promise<void> {
    this.rejecting.set(request.id);
    const outcome = await this.store.reject(request.id, this.reason().trim());
    if (outcome.ok) {
      this.reason.set('');
      this.rejecting.set(null);
      this.notifications.show('info', () => this.t('approvals.rejected', { target: request.target }));
    }
  }

  protected async setFourEyes(enabled: boolean): Promise<void> {
    const outcome = await this.store.setFourEyes(this.clusterId(), enabled);
    if (outcome.ok) {
      this.notifications.show('success', () => (outcome.value.fourEyes ? this.t('approvals.changedOn', { name: outcome.value.name }) : this.t('approvals.changedOff', { name: outcome.value.name })));
    }
  }
}
