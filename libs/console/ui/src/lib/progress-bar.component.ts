import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';

export type ProgressTone = 'info' | 'ok' | 'error' | 'neutral';

/** A thin progress bar (role="progressbar" with its value), labelled by `label`. */
@Component({
  selector: 'ccos-progress-bar',
  changeDetection: ChangeDetectionStrategy.OnPush,
  host: {
    role: 'progressbar',
    'aria-valuemin': '0',
    'aria-valuemax': '100',
    '[attr.aria-valuenow]': 'clamped()',
    '[attr.aria-label]': 'label()',
    '[class]': "'tone-' + tone()",
  },
  styles: `
    :host { display: block; height: 0.4rem; border-radius: 999px; background: var(--ccos-border); overflow: hidden; }
    .fill { height: 100%; border-radius: inherit; background: var(--ccos-primary); transition: width 0.3s ease; }
    :host(.tone-ok) .fill { background: var(--ccos-ok); }
    :host(.tone-error) .fill { background: var(--ccos-danger); }
    :host(.tone-neutral) .fill { background: var(--ccos-border-strong); }
    @media (prefers-reduced-motion: reduce) { .fill { transition: none; } }
  `,
  template: `<div class="fill" [style.width.%]="clamped()"></div>`,
})
export class ProgressBarComponent {
  readonly value = input.required<number>();
  readonly label = input.required<string>();
  readonly tone = input<ProgressTone>('info');

  protected readonly clamped = computed(() => Math.max(0, Math.min(100, Math.round(this.value()))));
}
