import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal } from '@angular/core';
import { type ClusterRemediation, ClusterRemediationStore, ErrorReporter, Notifications, Session } from '@ccos/console/data-access';
import { ButtonDirective, StatusBadgeComponent, type StatusTone, TextFieldComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import { clustersMessages } from '../clusters.messages';

type NumberField = 'unhealthySeconds' | 'rungTimeoutSeconds' | 'maxUnhealthy';

/**
 * A cluster's remediation on its page: off, on or paused, the cap's hold when there is one, and
 * (for an ADMIN) the policy's form. The numbers are checked by the API, whose refusals show on
 * their fields.
 */
@Component({
  selector: 'ccos-remediation-card',
  imports: [ButtonDirective, ServerTextPipe, StatusBadgeComponent, TextFieldComponent],
  providers: [ClusterRemediationStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <section class="ccos-card" aria-labelledby="remediation-heading" data-testid="remediation" [attr.data-state]="state()">
      <div class="head">
        <h2 id="remediation-heading">{{ t('remediation.heading') }}</h2>
        <ccos-status-badge [tone]="tone()" data-testid="remediation-state">{{ stateLabel() }}</ccos-status-badge>
      </div>
      @if (store.remediation(); as remediation) {
        @if (remediation.held; as held) {
          <p class="held" role="status" data-testid="remediation-held">
            {{ held.message | serverText: held.messageCode : held.messageParams }}
            <span class="ccos-muted">{{ t('remediation.heldSince', { when: i18n.formatDateTime(held.since) }) }}</span>
          </p>
        }
        <p class="explain">{{ explain(remediation) }}</p>
        @if (isAdmin()) {
          <form class="policy" (submit)="save($event)" [attr.aria-label]="t('remediation.form')">
            <label class="check"><input type="checkbox" name="enabled" [checked]="enabled()" (change)="enabled.set(checkedOf($event))" /> {{ t('remediation.enabled') }}</label>
            <label class="check"><input type="checkbox" name="paused" [checked]="paused()" (change)="paused.set(checkedOf($event))" /> {{ t('remediation.paused') }}</label>
            <ccos-text-field name="unhealthySeconds" inputMode="numeric" [label]="t('remediation.unhealthySeconds')" [error]="errorOf('unhealthySeconds')" [(value)]="numbers.unhealthySeconds" />
            <ccos-text-field name="rungTimeoutSeconds" inputMode="numeric" [label]="t('remediation.rungTimeoutSeconds')" [error]="errorOf('rungTimeoutSeconds')" [(value)]="numbers.rungTimeoutSeconds" />
            <ccos-text-field name="maxUnhealthy" inputMode="numeric" [label]="t('remediation.maxUnhealthy')" [error]="errorOf('maxUnhealthy')" [(value)]="numbers.maxUnhealthy" />
            <label class="check"><input type="checkbox" name="maxUnhealthyIsPercent" [checked]="percent()" (change)="percent.set(checkedOf($event))" /> {{ t('remediation.percent') }}</label>
            <div class="ccos-actions">
              <button ccosButton="primary" type="submit" [busy]="store.sending()">{{ t('remediation.save') }}</button>
            </div>
          </form>
        }
      } @else if (problem(); as text) {
        <p class="ccos-muted">{{ text }}</p>
      }
    </section>
  `,
  styles: `
    .head { display: flex; align-items: center; gap: 0.75rem; flex-wrap: wrap; }
    .held { margin: 0.5rem 0; padding: 0.5rem 0.75rem; border-left: 3px solid var(--ccos-error, #b91c1c); background: var(--ccos-surface-muted, #fef2f2); }
    .held .ccos-muted { display: block; font-size: 0.85em; }
    .explain { color: var(--ccos-text-muted); }
    .policy { display: grid; gap: 0.75rem; margin-top: 0.75rem; }
    .check { display: flex; align-items: center; gap: 0.5rem; }
  `,
})
export class RemediationCardComponent {
  readonly clusterId = input.required<string>();

  private readonly session = inject(Session);
  private readonly errors = inject(ErrorReporter);
  private readonly notifications = inject(Notifications);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(clustersMessages);
  protected readonly store = inject(ClusterRemediationStore);
  protected readonly isAdmin = computed(() => this.session.allows('ADMIN'));

  protected readonly enabled = signal(false);
  protected readonly paused = signal(false);
  protected readonly percent = signal(false);
  protected readonly numbers: Record<NumberField, ReturnType<typeof signal<string>>> = {
    unhealthySeconds: signal(''),
    rungTimeoutSeconds: signal(''),
    maxUnhealthy: signal(''),
  };

  protected readonly state = computed<'OFF' | 'ON' | 'PAUSED' | 'HELD'>(() => {
    const remediation = this.store.remediation();
    if (!remediation?.policy.enabled) {
      return 'OFF';
    }
    return remediation.held ? 'HELD' : remediation.policy.paused ? 'PAUSED' : 'ON';
  });
  protected readonly stateLabel = computed(() => this.t(`remediation.state.${this.state()}`));
  /** Fields that are not whole numbers, found before sending. */
  private readonly notWhole = signal<ReadonlySet<NumberField>>(new Set());
  protected readonly tone = computed<StatusTone>(() => ({ OFF: 'neutral', ON: 'ok', PAUSED: 'warn', HELD: 'error' } as const)[this.state()]);
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  constructor() {
    effect(() => this.store.select(this.clusterId()));
    // The form starts from the stored policy, and again after each save.
    effect(() => {
      const policy = this.store.remediation()?.policy;
      if (policy) {
        this.enabled.set(policy.enabled);
        this.paused.set(policy.paused);
        this.percent.set(policy.maxUnhealthyIsPercent);
        this.numbers.unhealthySeconds.set(String(policy.unhealthySeconds));
        this.numbers.rungTimeoutSeconds.set(String(policy.rungTimeoutSeconds));
        this.numbers.maxUnhealthy.set(String(policy.maxUnhealthy));
      }
    });
  }

  protected explain(remediation: ClusterRemediation): string {
    const policy = remediation.policy;
    if (!policy.enabled) {
      return this.t('remediation.explainOff');
    }
    return this.t('remediation.explainOn', {
      unhealthy: policy.unhealthySeconds,
      rung: policy.rungTimeoutSeconds,
      cap: policy.maxUnhealthyIsPercent ? `${policy.maxUnhealthy}%` : String(policy.maxUnhealthy),
    });
  }

  protected errorOf(field: NumberField): string | null {
    return this.notWhole().has(field) ? this.t('remediation.wholeNumber') : (this.store.fieldErrors()[field] ?? null);
  }

  protected checkedOf(event: Event): boolean {
    return (event.target as HTMLInputElement).checked;
  }

  protected async save(event: Event): Promise<void> {
    event.preventDefault();
    const whole = (field: NumberField) => (/^\d{1,9}$/.test(this.numbers[field]().trim()) ? Number(this.numbers[field]().trim()) : Number.NaN);
    const fields: NumberField[] = ['unhealthySeconds', 'rungTimeoutSeconds', 'maxUnhealthy'];
    this.notWhole.set(new Set(fields.filter((field) => Number.isNaN(whole(field)))));
    if (this.notWhole().size > 0) {
      return;
    }
    const outcome = await this.store.save(this.clusterId(), {
      enabled: this.enabled(),
      paused: this.paused(),
      unhealthySeconds: whole('unhealthySeconds'),
      rungTimeoutSeconds: whole('rungTimeoutSeconds'),
      maxUnhealthy: whole('maxUnhealthy'),
      maxUnhealthyIsPercent: this.percent(),
    });
    if (outcome.ok) {
      this.notifications.show('success', () => this.t('remediation.saved'));
    }
  }
}
