import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { type AuditEntry, AuditLogStore, ErrorReporter } from '@ccos/console/data-access';
import { ButtonDirective, DataStateComponent, type FieldOption, PageHeaderComponent, SelectFieldComponent, StatusBadgeComponent, type StatusTone, TextFieldComponent } from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import type { AuditResult } from '@ccos/shared/api-schema';
import { auditMessages } from './audit.messages';

const RESULT_TONES: Record<AuditResult, StatusTone> = { SUCCESS: 'ok', FAILURE: 'error', DENIED: 'warn', PENDING: 'warn' };
const RESULTS = Object.keys(RESULT_TONES) as AuditResult[];

/** The audit log (ADMIN): who did what, newest first, with a filter and older pages on demand. */
@Component({
  selector: 'ccos-audit-page',
  imports: [ButtonDirective, DataStateComponent, PageHeaderComponent, SelectFieldComponent, StatusBadgeComponent, TextFieldComponent],
  providers: [AuditLogStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './audit.page.html',
  styleUrl: './audit.page.css',
})
export class AuditPage {
  private readonly errors = inject(ErrorReporter);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(auditMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(AuditLogStore);

  protected readonly actor = signal('');
  protected readonly action = signal('');
  protected readonly target = signal('');
  protected readonly result = signal<AuditResult | ''>('');

  protected readonly resultOptions = computed<readonly FieldOption[]>(() => [
    { value: '', label: this.t('filter.result.any') },
    ...RESULTS.map((result) => ({ value: result, label: this.t(`result.${result}`) })),
  ]);
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  constructor() {
    void this.store.search({});
  }

  protected chooseResult(value: string): void {
    this.result.set(RESULTS.find((result) => result === value) ?? '');
  }

  protected search(event: Event): void {
    event.preventDefault();
    void this.store.search({ actor: this.actor().trim(), action: this.action().trim(), targetId: this.target().trim(), result: this.result() || null });
  }

  protected clear(): void {
    this.actor.set('');
    this.action.set('');
    this.target.set('');
    this.result.set('');
    void this.store.search({});
  }

  protected resultLabel(result: AuditResult): string {
    return this.t(`result.${result}`);
  }

  protected resultTone(result: AuditResult): StatusTone {
    return RESULT_TONES[result];
  }

  /** The recorded arguments, readable; secrets were replaced by [redacted] before they were stored. */
  protected argumentsOf(entry: AuditEntry): string | null {
    const args = (entry.detail as { args?: unknown } | null)?.args;
    return args && typeof args === 'object' && Object.keys(args).length > 0 ? JSON.stringify(args, null, 2) : null;
  }
}
