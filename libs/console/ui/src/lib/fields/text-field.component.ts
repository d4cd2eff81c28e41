import { ChangeDetectionStrategy, Component, booleanAttribute, input } from '@angular/core';
import { FIELD_STYLES } from './field.styles';
import { TextControlDirective, provideValueAccessor } from './text-control.directive';

/**
 * A labelled text input or textarea with an optional hint and error. The error is tied to
 * the control with aria-describedby and marks it aria-invalid, so screen readers read it.
 * Bind it with `[(value)]`, or as a control of an Angular form (`formControlName`).
 */
@Component({
  selector: 'ccos-text-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: FIELD_STYLES,
  providers: [provideValueAccessor(() => TextFieldComponent)],
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
export class TextFieldComponent extends TextControlDirective {
  readonly type = input<'text' | 'password' | 'url' | 'email'>('text');
  readonly autocomplete = input('');
  readonly inputMode = input<'' | 'text' | 'url' | 'decimal' | 'numeric'>('');
  readonly multiline = input(false, { transform: booleanAttribute });
  readonly monospace = input(false, { transform: booleanAttribute });
  readonly rows = input(4);
}
