import { ChangeDetectionStrategy, Component, input, model } from '@angular/core';
import { uniqueId } from '../unique-id';
import { FIELD_STYLES } from './field.styles';
import type { FieldOption } from './select-field.component';

/** Radio buttons in a fieldset with a legend: one choice out of a few, all visible. */
@Component({
  selector: 'ccos-choice-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: [
    FIELD_STYLES,
    `
      fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 0.3rem; min-width: 0; }
      legend { padding: 0; margin-bottom: 0.3rem; }
      .choices { display: flex; flex-wrap: wrap; gap: 0.5rem 1.25rem; }
      .choice { display: inline-flex; gap: 0.45rem; align-items: center; cursor: pointer; }
      input { width: 1.05rem; height: 1.05rem; margin: 0; accent-color: var(--ccos-primary); }
    `,
  ],
  template: `
    <fieldset [attr.aria-describedby]="hint() ? hintId : null">
      <legend class="label">{{ legend() }}</legend>
      @if (hint()) {
        <p class="hint" [id]="hintId">{{ hint() }}</p>
      }
      <div class="choices">
        @for (option of options(); track option.value) {
          <label class="choice">
            <input type="radio" [name]="name" [value]="option.value" [checked]="option.value === value()" (change)="value.set(option.value)" />
            {{ option.label }}
          </label>
        }
      </div>
    </fieldset>
  `,
})
export class ChoiceFieldComponent {
  readonly legend = input.required<string>();
  readonly options = input.required<readonly FieldOption[]>();
  readonly value = model<string>('');
  readonly hint = input<string | null>(null);

  protected readonly name = uniqueId('choice');
  protected readonly hintId = `${this.name}-hint`;
}
