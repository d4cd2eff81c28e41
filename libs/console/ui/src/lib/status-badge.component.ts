import { ChangeDetectionStrategy, Component, input } from '@angular/core';

export type StatusTone = 'ok' | 'warn' | 'error' | 'info' | 'neutral';

/** A short status word in a coloured pill. The colour repeats the word, never replaces it. */
@Component({
  selector: 'ccos-status-badge',
  changeDetection: ChangeDetectionStrategy.OnPush,
  host: { '[class]': "'tone-' + tone()" },
  styles: `
    :host {
      display: inline-flex; align-items: center; gap: 0.35rem; padding: 0.1rem 0.55rem;
      border-radius: 999px; font-size: 0.8rem; font-weight: 600; white-space: nowrap; border: 1px solid transparent;
    }
    :host::before { content: ''; width: 0.45rem; height: 0.45rem; border-radius: 50%; background: currentColor; }
    :host(.tone-ok) { background: var(--ccos-ok-soft); color: var(--ccos-ok); }
    :host(.tone-warn) { background: var(--ccos-warn-soft); color: var(--ccos-warn); }
    :host(.tone-error) { background: var(--ccos-danger-soft); color: var(--ccos-danger); }
    :host(.tone-info) { background: var(--ccos-primary-soft); color: var(--ccos-primary); }
    :host(.tone-neutral) { background: #eef1f5; color: var(--ccos-text-muted); border-color: var(--ccos-border); }
  `,
  template: `<ng-content />`,
})
export class StatusBadgeComponent {
  readonly tone = input<StatusTone>('neutral');
}
