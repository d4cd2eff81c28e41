import { ChangeDetectionStrategy, Component, booleanAttribute, computed, effect, inject, input, output, signal } from '@angular/core';
import { ConfirmDialogComponent, TextFieldComponent } from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import { nodesMessages } from '../nodes.messages';

/**
 * Trusting a host's new SSH key (ADMIN). A changed key means a reinstalled host or an
 * attack, so the dialog shows the pinned and the offered fingerprint side by side and
 * asks for the new one to be typed (or pasted from the host owner's message) exactly;
 * only then can it be accepted.
 */
@Component({
  selector: 'ccos-host-key-dialog',
  imports: [ConfirmDialogComponent, TextFieldComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    .fields { display: flex; flex-direction: column; gap: 0.9rem; }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.35rem 1rem; margin: 0; }
    dt { color: var(--ccos-text-muted); }
    dd { margin: 0; font-family: var(--ccos-mono); font-size: 0.85rem; overflow-wrap: anywhere; }
    .old { text-decoration: line-through; color: var(--ccos-text-muted); }
    .new { font-weight: 600; }
    .match { color: var(--ccos-ok); font-size: 0.875rem; }
  `,
  template: `
    <ccos-confirm-dialog
      [open]="open()"
      tone="danger"
      [heading]="t('hostKey.title', { hostname: hostname() })"
      [confirmLabel]="t('hostKey.accept')"
      [cancelLabel]="common('cancel')"
      [busy]="busy()"
      [confirmDisabled]="!matches()"
      (confirmed)="accept()"
      (cancelled)="cancelled.emit()"
    >
      <div class="fields">
        <p class="ccos-alert ccos-alert--error">{{ t('hostKey.warning') }}</p>
        <dl>
          <dt>{{ t('hostKey.pinned') }}</dt>
          <dd class="old" data-testid="pinned-fingerprint">{{ pinned() ?? '—' }}</dd>
          <dt>{{ t('hostKey.offered') }}</dt>
          <dd class="new" data-testid="offered-fingerprint">{{ offered() }}</dd>
        </dl>
        <p>{{ t('hostKey.howToCheck') }}</p>
        <ccos-text-field
          name="fingerprint"
          monospace
          autocomplete="off"
          [label]="t('hostKey.confirmLabel')"
          [hint]="t('hostKey.confirmHint')"
          placeholder="SHA256:…"
          [(value)]="typed"
          [error]="error()"
        />
        @if (matches()) {
          <p class="match" role="status">✓ {{ t('hostKey.matches') }}</p>
        }
      </div>
    </ccos-confirm-dialog>
  `,
})
export class HostKeyDialogComponent {
  readonly open = input.required<boolean>();
  readonly hostname = input.required<string>();
  readonly pinned = input<string | null>(null);
  readonly offered = input.required<string>();
  readonly busy = input(false, { transform: booleanAttribute });
  /** The API's complaint about the fingerprint (it changed again meanwhile). */
  readonly serverError = input<string | null>(null);
  readonly accepted = output<string>();
  readonly cancelled = output();

  private readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(nodesMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly typed = signal('');

  protected readonly matches = computed(() => this.typed().trim() === this.offered());
  protected readonly error = computed(() => {
    const typed = this.typed().trim();
    if (this.serverError()) {
      return this.serverError();
    }
    if (typed && typed === this.pinned()) {
      return this.t('hostKey.isPinned');
    }
    return typed && !this.matches() && typed.length >= this.offered().length ? this.t('hostKey.noMatch') : null;
  });

  constructor() {
    effect(() => {
      if (this.open()) {
        this.typed.set('');
      }
    });
  }

  protected accept(): void {
    if (this.matches()) {
      this.accepted.emit(this.typed().trim());
    }
  }
}
