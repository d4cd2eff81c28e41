import { Directive, type ElementRef, type Provider, type Type, booleanAttribute, computed, forwardRef, input, model, output, signal, viewChild } from '@angular/core';
import { type ControlValueAccessor, NG_VALUE_ACCESSOR } from '@angular/forms';
import { uniqueId } from '../unique-id';

/** Registers a field as the value accessor of the form control it is bound to (`formControlName`). */
export function provideValueAccessor(field: () => Type<ControlValueAccessor>): Provider {
  return { provide: NG_VALUE_ACCESSOR, useExisting: forwardRef(field), multi: true };
}

/**
 * What a labelled text field is to its page and to Angular's forms: label, hint and error
 * (tied to the control, `#control` in the template, with aria-describedby), the value as a
 * model (`[(value)]`) and as a form control's (ControlValueAccessor), disabled by input or by
 * the form, touched on blur. A field extends it and draws its own control.
 */
@Directive()
export abstract class TextControlDirective implements ControlValueAccessor {
  readonly label = input.required<string>();
  readonly value = model('');
  readonly name = input('');
  readonly hint = input<string | null>(null);
  readonly error = input<string | null>(null);
  readonly placeholder = input('');
  readonly required = input(false, { transform: booleanAttribute });
  readonly disabled = input(false, { transform: booleanAttribute });
  readonly blurred = output();

  protected readonly id = uniqueId('field');
  protected readonly hintId = `${this.id}-hint`;
  protected readonly errorId = `${this.id}-error`;
  protected readonly describedBy = computed(() => [this.hint() ? this.hintId : '', this.error() ? this.errorId : ''].filter(Boolean).join(' ') || null);
  private readonly disabledByForm = signal(false);
  protected readonly isDisabled = computed(() => this.disabled() || this.disabledByForm());
  private readonly control = viewChild<ElementRef<HTMLInputElement | HTMLTextAreaElement>>('control');
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

  /** The user typed: the text is the field's value, and its form control's when it has one. */
  protected typed(event: Event): void {
    this.take((event.target as HTMLInputElement | HTMLTextAreaElement).value);
  }

  protected take(text: string): void {
    this.value.set(text);
    this.changed(text);
  }

  protected left(): void {
    this.touched();
    this.blurred.emit();
  }
}
