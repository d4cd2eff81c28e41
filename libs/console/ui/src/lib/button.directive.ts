import { Directive, input } from '@angular/core';

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'ghost';

/**
 * Styles a native `<button>` or `<a>` (so it keeps its semantics and keyboard behaviour).
 * `busy` shows a spinner and sets aria-busy; disable the button yourself while it is busy.
 *
 * @example <button ccosButton="primary" type="submit" [busy]="saving()" [disabled]="saving()">Save</button>
 */
@Directive({
  selector: 'button[ccosButton], a[ccosButton]',
  host: {
    class: 'ccos-btn',
    '[class.ccos-btn--primary]': "variant() === 'primary'",
    '[class.ccos-btn--danger]': "variant() === 'danger'",
    '[class.ccos-btn--ghost]': "variant() === 'ghost'",
    '[attr.aria-busy]': 'busy() ? "true" : null',
  },
})
export class ButtonDirective {
  readonly variant = input<ButtonVariant, ButtonVariant | ''>('secondary', { alias: 'ccosButton', transform: (value) => value || 'secondary' });
  readonly busy = input(false);
}
