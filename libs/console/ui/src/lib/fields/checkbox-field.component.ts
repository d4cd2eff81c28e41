import { ChangeDetectionStrategy, Component, input, model } from '@angular/core';
import { uniqueId } from '../unique-id';
import { FIELD_STYLES } from './field.styles';

/** A checkbox with its label and an optional explanation under it. */
@Component({
  selector: 'ccos-checkbox-field',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: [
    FIELD_STYLES,
    `
      .row { display: flex; gap: 0.55rem; align-items: flex-start; }
      input { width: 1.05rem; height: 1.05rem; margin: 0.2rem 0 0; flex: none; accent-color: var(--ccos-primary); }
      .hint { margin-left: 1.6rem; }
    `,
  ],
  template: `
    <div class="row">
      <input type="checkbox" [id]="id" [checked]="checked()" [attr.aria-describedby]="hint() ? hintId : null" (change)="checked.set(isChecked($event))" />
      <label class="label" [for]="id">{{ label() }}</label>
    </div>
    @if (hint()) {
      <p class="hint" [id]="hintId">{{ hint() }}</p>
    }
  `,
})
export class CheckboxFieldComponent {
  readonly label = input.required<string>();
  readonly checked = model(false);
  readonly hint = input<string | null>(null);

  protected readonly id = uniqueId('checkbox');
  protected readonly hintId = `${this.id}-hint`;

  protected isChecked(event: Event): boolean {
    return (event.target as HTMLInputElement).checked;
  }
}
