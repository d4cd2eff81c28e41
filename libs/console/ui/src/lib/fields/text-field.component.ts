import { ChangeDetectionStrategy, Component, type ElementRef, booleanAttribute, computed, forwardRef, input, model, output, signal, viewChild } from '@angular/core';
import { type ControlValueAccessor, NG_VALUE_ACCESSOR } from '@angular/forms';
import { uniqueId } from '../unique-id';
import { FIELD_STYLES } from './field.styles';

/**
 * A labelled text input or textarea with an optional hint and error. The error is tied to
 * the control with aria-describedby and marks it aria-invalid, so screen readers read it.
 * Bind it with `[(value)]`, or as a control of an Angular form (`formControlName`).
 */
@Component({
  selector: 'ccos-text-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: FIELD_STYLES,
  providers: [{ provide: NG_VALUE_ACCESSOR, useExisting: forwardRef(() => TextFieldComponent), multi: true }],
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
        [disabled]="isDisabled()"
        [attr.placeholder]="placeholder() || null"
        [attr.aria-invalid]="error() ? 'true' : null"
        [attr.aria-describedby]="describedBy()"
        spellcheck="false"
        (input)="typed($event)"
        (blur)="left()"
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
        [disabled]="isDisabled()"
        [attr.autocomplete]="autocomplete() || null"
        [attr.inputmode]="inputMode() || null"
        [attr.placeholder]="placeholder() || null"
        [attr.aria-invalid]="error() ? 'true' : null"
        [attr.aria-describedby]="describedBy()"
        [attr.spellcheck]="type() === 'text' ? 'false' : null"
        (input)="typed($event)"
        (blur)="left()"
      />
    }
    @if (error()) {
      <p class="error" [id]="errorId">{{ error() }}</p>
    }
  `,
})
export class TextFieldComponent implements ControlValueAccessor {
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
  private readonly disabledByForm = signal(false);
  protected readonly isDisabled = computed(() => this.disabled() || this.disabledByForm());
  private changed: (value: string) => void = () => undefined;
  private touched: () => void = () => undefined;

  writeValue(value: string | null): void {
    this.value.set(value ?? '');
  }

  registerOnChange(changed: (value: string) => void): void {
    this.changed = changed;
  }

  registerOnTouched(touched: () => void): void {
    this.touched = touched;
  }

  setDisabledState(disabled: boolean): void {
    this.disabledByForm.set(disabled);
  }

  /** Moves keyboard focus here (a form does this for its first invalid field). */
  focus(): void {
    this.control()?.nativeElement.focus();
  }

  protected typed(event: Event): void {
    const text = (event.target as HTMLInputElement | HTMLTextAreaElement).value;
    this.value.set(text);
    this.changed(text);
  }

  protected left(): void {
    this.touched();
    this.blurred.emit();
  }
}
