import { ChangeDetectionStrategy, Component, type ElementRef, booleanAttribute, effect, input, output, viewChild } from '@angular/core';
import { ButtonDirective } from './button.directive';
import { uniqueId } from './unique-id';

/**
 * A modal confirmation on the native `<dialog>` (focus is kept inside, Escape cancels,
 * the page behind is inert). The body is projected; focus starts on Cancel, the safe choice,
 * and returns to where it was when the dialog closes.
 */
@Component({
  selector: 'ccos-confirm-dialog',
  imports: [ButtonDirective],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    dialog {
      width: min(34rem, calc(100vw - 2rem)); padding: 0; border: 1px solid var(--ccos-border);
      border-radius: calc(var(--ccos-radius) * 1.5); box-shadow: 0 20px 40px rgb(16 24 40 / 25%); color: inherit;
    }
    dialog::backdrop { background: rgb(16 24 40 / 45%); }
    .body { padding: 1.25rem 1.5rem; display: flex; flex-direction: column; gap: 0.75rem; }
    footer { display: flex; justify-content: flex-end; gap: 0.5rem; padding: 0.9rem 1.5rem; background: var(--ccos-surface-muted); border-top: 1px solid var(--ccos-border); }
  `,
  template: `
    <dialog #dialog [attr.aria-labelledby]="titleId" [attr.aria-describedby]="bodyId" (cancel)="cancelFromEscape($event)">
      <div class="body">
        <h2 [id]="titleId">{{ heading() }}</h2>
        <div [id]="bodyId"><ng-content /></div>
      </div>
      <footer>
        <button ccosButton type="button" autofocus [disabled]="busy()" (click)="cancelled.emit()">{{ cancelLabel() }}</button>
        <button [ccosButton]="tone()" type="button" [busy]="busy()" [disabled]="busy() || confirmDisabled()" (click)="confirmed.emit()">{{ confirmLabel() }}</button>
      </footer>
    </dialog>
  `,
})
export class ConfirmDialogComponent {
  readonly open = input.required<boolean>();
  readonly heading = input.required<string>();
  readonly confirmLabel = input.required<string>();
  readonly cancelLabel = input.required<string>();
  readonly tone = input<'primary' | 'danger'>('primary');
  readonly busy = input(false, { transform: booleanAttribute });
  /** Keeps the confirm button off until the body's own condition holds (e.g. a typed confirmation). */
  readonly confirmDisabled = input(false, { transform: booleanAttribute });
  readonly confirmed = output();
  readonly cancelled = output();

  protected readonly titleId = uniqueId('dialog-title');
  protected readonly bodyId = uniqueId('dialog-body');
  private readonly dialog = viewChild.required<ElementRef<HTMLDialogElement>>('dialog');
  private returnFocusTo: HTMLElement | null = null;

  constructor() {
    effect(() => {
      const dialog = this.dialog().nativeElement;
      if (this.open() && !dialog.open) {
        this.returnFocusTo = dialog.ownerDocument.activeElement as HTMLElement | null;
        dialog.showModal();
      } else if (!this.open() && dialog.open) {
        dialog.close();
        this.returnFocusTo?.focus();
        this.returnFocusTo = null;
      }
    });
  }

  protected cancelFromEscape(event: Event): void {
    // The owner closes the dialog through `open`, so the state stays in one place.
    event.preventDefault();
    if (!this.busy()) {
      this.cancelled.emit();
    }
  }
}
