import { ChangeDetectionStrategy, Component, type ElementRef, booleanAttribute, computed, input, model, output, viewChild } from '@angular/core';
import { uniqueId } from '../unique-id';
import { FIELD_STYLES } from './field.styles';

/**
 * A labelled text input or textarea with an optional hint and error. The error is tied to
 * the control with aria-describedby and marks it aria-invalid, so screen readers read it.
 */
@Component({
  selector: 'ccos-text-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: FIELD_STYLES,
  template: `
    <label class="label" [for]="id">{{ label() }}@if (required()) {<span class="required" aria-hidden="true">*</span>}</label>
    @if (hint()) {
      <p class="hint" [id]="hintId">{{ hint() }}</p>
    }
    @if (multiline()) {
      <textarea
        #control
        class="control"
        [class.mono]="monospace()"
        [id]="id"
        [name]="name() || id"
        [rows]="rows()"
        [value]="value()"
        [required]="required()"
        [disabled]="disabled()"
        [attr.placeholder]="placeholder() || null"
        [attr.aria-invalid]="error() ? 'true' : null"
        [attr.aria-describedby]="describedBy()"
        spellcheck="false"
        (input)="value.set(textOf($event))"
        (blur)="blurred.emit()"
      ></textarea>
    } @else {
      <input
        #control
        class="control"
        [class.mono]="monospace()"
        [id]="id"
        [name]="name() || id"
        [type]="type()"
        [value]="value()"
        [required]="required()"
        [disabled]="disabled()"
        [attr.autocomplete]="autocomplete() || null"
        [attr.inputmode]="inputMode() || null"
        [attr.placeholder]="placeholder() || null"
        [attr.aria-invalid]="error() ? 'true' : null"
        [attr.aria-describedby]="describedBy()"
        [attr.spellcheck]="type() === 'text' ? 'false' : null"
        (input)="value.set(textOf($event))"
        (blur)="blurred.emit()"
      />
    }
    @if (error()) {
      <p class="error" [id]="errorId">{{ error() }}</p>
    }
  `,
})
export class TextFieldComponent {
  readonly label = input.required<string>();
  readonly value = model('');
  readonly type = input<'text' | 'password' | 'url' | 'email'>('text');
  readonly name = input('');
  readonly hint = input<string | null>(null);
  readonly error = input<string | null>(null);
  readonly placeholder = input('');
  readonly autocomplete = input('');
  readonly inputMode = input<'' | 'text' | 'url' | 'decimal' | 'numeric'>('');
  readonly required = input(false, { transform: booleanAttribute });
  readonly disabled = input(false, { transform: booleanAttribute });
  readonly multiline = input(false, { transform: booleanAttribute });
  readonly monospace = input(false, { transform: booleanAttribute });
  readonly rows = input(4);
  readonly blurred = output();

  protected readonly id = uniqueId('field');
  protected readonly hintId = `${this.id}-hint`;
  protected readonly errorId = `${this.id}-error`;
  protected readonly describedBy = computed(() => [this.hint() ? this.hintId : '', this.error() ? this.errorId : ''].filter(Boolean).join(' ') || null);
  private readonly control = viewChild<ElementRef<HTMLInputElement | HTMLTextAreaElement>>('control');

  /** Moves keyboard focus here (a form does this for its first invalid field). */
  focus(): void {
    this.control()?.nativeElement.focus();
  }

  protected textOf(event: Event): string {
    return (event.target as HTMLInputElement | HTMLTextAreaElement).value;
  }
}
