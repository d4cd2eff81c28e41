import { ChangeDetectionStrategy, Component, input, output } from '@angular/core';

export interface Toast {
  readonly id: number;
  readonly tone: 'success' | 'info' | 'error';
  /** Functions, so a toast can follow a language switch while it is shown. */
  readonly title: () => string;
  readonly message: () => string;
}

/**
 * Toasts in a live region at the corner of the screen. Errors are announced assertively
 * (role="alert"), the rest politely.
 */
@Component({
  selector: 'ccos-toasts',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { position: fixed; z-index: 1000; right: 1rem; bottom: 1rem; width: min(24rem, calc(100vw - 2rem)); display: flex; flex-direction: column; gap: 0.5rem; pointer-events: none; }
    .toast {
      pointer-events: auto; display: flex; gap: 0.75rem; align-items: flex-start; padding: 0.75rem 0.75rem 0.75rem 1rem;
      background: var(--ccos-surface); border: 1px solid var(--ccos-border); border-left: 4px solid var(--ccos-primary);
      border-radius: var(--ccos-radius); box-shadow: 0 8px 24px rgb(16 24 40 / 18%);
    }
    .toast.success { border-left-color: var(--ccos-ok); }
    .toast.error { border-left-color: var(--ccos-danger); }
    .text { flex: 1; min-width: 0; overflow-wrap: anywhere; }
    .title { font-weight: 600; }
    .message { color: var(--ccos-text-muted); font-size: 0.9rem; margin-top: 0.15rem; }
    button { flex: none; background: none; border: 0; font: inherit; font-size: 1.25rem; line-height: 1; padding: 0.15rem 0.4rem; cursor: pointer; color: var(--ccos-text-muted); border-radius: var(--ccos-radius); }
    button:hover { background: rgb(0 0 0 / 6%); color: var(--ccos-text); }
  `,
  template: `
    <div class="ccos-visually-hidden" aria-live="polite">
      @for (toast of politeToasts(); track toast.id) {
        <span>{{ toast.title() }}. {{ toast.message() }}</span>
      }
    </div>
    @for (toast of toasts(); track toast.id) {
      <div class="toast" [class]="toast.tone" [attr.role]="toast.tone === 'error' ? 'alert' : null" [attr.data-tone]="toast.tone">
        <div class="text">
          <p class="title">{{ toast.title() }}</p>
          @if (toast.message()) {
            <p class="message">{{ toast.message() }}</p>
          }
        </div>
        <button type="button" [attr.aria-label]="dismissLabel()" (click)="dismissed.emit(toast.id)">×</button>
      </div>
    }
  `,
})
export class ToastsComponent {
  readonly toasts = input.required<readonly Toast[]>();
  readonly dismissLabel = input.required<string>();
  readonly dismissed = output<number>();

  protected politeToasts(): readonly Toast[] {
    return this.toasts().filter((toast) => toast.tone !== 'error');
  }
}
