import { ChangeDetectionStrategy, Component, booleanAttribute, input, output } from '@angular/core';
import { ButtonDirective } from './button.directive';

/**
 * What a page shows while its data loads, when loading failed, when there is nothing,
 * and otherwise the projected content. Empty-state actions go in `[emptyAction]`.
 */
@Component({
  selector: 'ccos-data-state',
  imports: [ButtonDirective],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: block; }
    .state {
      display: flex; flex-direction: column; align-items: center; gap: 0.75rem; text-align: center;
      padding: 2.5rem 1rem; background: var(--ccos-surface); border: 1px dashed var(--ccos-border-strong); border-radius: var(--ccos-radius);
    }
    .state.problem { border-style: solid; border-color: #f4b8b2; background: var(--ccos-danger-soft); }
    .spinner { width: 1.6rem; height: 1.6rem; border-radius: 50%; border: 3px solid var(--ccos-border); border-top-color: var(--ccos-primary); animation: spin 0.8s linear infinite; }
    @keyframes spin { to { transform: rotate(360deg); } }
    @media (prefers-reduced-motion: reduce) { .spinner { animation: none; } }
    .title { font-weight: 600; }
    .detail { color: var(--ccos-text-muted); max-width: 40rem; overflow-wrap: anywhere; }
  `,
  template: `
    @if (loading()) {
      <div class="state" role="status" aria-live="polite">
        <span class="spinner" aria-hidden="true"></span>
        <p>{{ loadingText() }}</p>
      </div>
    } @else if (problem()) {
      <div class="state problem" role="alert">
        <p class="title">{{ problemTitle() }}</p>
        <p class="detail">{{ problem() }}</p>
        <button ccosButton type="button" (click)="retry.emit()">{{ retryLabel() }}</button>
      </div>
    } @else if (empty()) {
      <div class="state">
        <p class="title">{{ emptyText() }}</p>
        @if (emptyHint()) {
          <p class="detail">{{ emptyHint() }}</p>
        }
        <ng-content select="[emptyAction]" />
      </div>
    } @else {
      <ng-content />
    }
  `,
})
export class DataStateComponent {
  readonly loading = input(false, { transform: booleanAttribute });
  readonly empty = input(false, { transform: booleanAttribute });
  /** A failure message to show instead of the content (null when there is none). */
  readonly problem = input<string | null>(null);
  readonly problemTitle = input('');
  readonly loadingText = input.required<string>();
  readonly emptyText = input('');
  readonly emptyHint = input('');
  readonly retryLabel = input('');
  readonly retry = output();
}
