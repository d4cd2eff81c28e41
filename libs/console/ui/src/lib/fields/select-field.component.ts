import { ChangeDetectionStrategy, Component, booleanAttribute, computed, input, model } from '@angular/core';
import { uniqueId } from '../unique-id';
import { FIELD_STYLES } from './field.styles';

export interface FieldOption<T extends string = string> {
  readonly value: T;
  readonly label: string;
}

/** A labelled native `<select>`. */
@Component({
  selector: 'ccos-select-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: FIELD_STYLES,
  template: `
    <label class="label" [for]="id">{{ label() }}</label>
    @if (hint()) {
      <p class="hint" [id]="hintId">{{ hint() }}</p>
    }
    <select
      class="control"
      [id]="id"
      [disabled]="disabled()"
      [attr.aria-invalid]="error() ? 'true' : null"
      [attr.aria-describedby]="describedBy()"
      (change)="value.set(valueOf($event))"
    >
      @for (option of options(); track option.value) {
        <option [value]="option.value" [selected]="option.value === value()">{{ option.label }}</option>
      }
    </select>
    @if (error()) {
      <p class="error" [id]="errorId">{{ error() }}</p>
    }
  `,
})
export class SelectFieldComponent {
  readonly label = input.required<string>();
  readonly options = input.required<readonly FieldOption[]>();
  readonly value = model<string>('');
  readonly hint = input<string | null>(null);
  readonly error = input<string | null>(null);
  readonly disabled = input(false, { transform: booleanAttribute });

  protected readonly id = uniqueId('select');
  protected readonly hintId = `${this.id}-hint`;
  protected readonly errorId = `${this.id}-error`;
  protected readonly describedBy = computed(() => [this.hint() ? this.hintId : '', this.error() ? this.errorId : ''].filter(Boolean).join(' ') || null);

  protected valueOf(event: Event): string {
    return (event.target as HTMLSelectElement).value;
  }
}
