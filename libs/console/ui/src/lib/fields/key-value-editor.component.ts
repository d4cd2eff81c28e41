import { ChangeDetectionStrategy, Component, input, model } from '@angular/core';
import { uniqueId } from '../unique-id';
import { FIELD_STYLES } from './field.styles';
import type { FieldOption } from './select-field.component';

/** One row: a Kubernetes label, or a taint when the editor offers effects. */
export interface KeyValueRow {
  readonly key: string;
  readonly value: string;
  /** Only used when `effects` is given. */
  readonly effect: string;
}

/**
 * Rows of key and value (and effect, for taints) in a fieldset, added and removed by
 * buttons. Each row's error sits under it; `error` is about the whole set.
 */
@Component({
  selector: 'ccos-key-value-editor',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: [
    FIELD_STYLES,
    `
      fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 0.45rem; min-width: 0; }
      legend { padding: 0; margin-bottom: 0.2rem; }
      .rows { display: flex; flex-direction: column; gap: 0.45rem; }
      .row { display: grid; grid-template-columns: minmax(0, 1.2fr) minmax(0, 1fr) auto; gap: 0.5rem; align-items: end; }
      .row.with-effect { grid-template-columns: minmax(0, 1.2fr) minmax(0, 1fr) minmax(8rem, 0.8fr) auto; }
      .cell { display: flex; flex-direction: column; gap: 0.15rem; min-width: 0; }
      .cell label { font-size: 0.8rem; color: var(--ccos-text-muted); }
      .row-error { grid-column: 1 / -1; }
      .remove { font: inherit; min-height: 2.4rem; padding: 0 0.7rem; border: 1px solid var(--ccos-border-strong); border-radius: var(--ccos-radius); background: var(--ccos-surface); cursor: pointer; color: var(--ccos-danger); }
      .remove:hover { background: var(--ccos-danger-soft); }
      .add { align-self: flex-start; font: inherit; font-size: 0.9rem; padding: 0.3rem 0.7rem; border: 1px dashed var(--ccos-border-strong); border-radius: var(--ccos-radius); background: transparent; cursor: pointer; color: var(--ccos-primary); }
      .add:hover { background: var(--ccos-primary-soft); }
      .empty { color: var(--ccos-text-muted); font-size: 0.875rem; }
      @media (max-width: 640px) { .row, .row.with-effect { grid-template-columns: 1fr 1fr; } }
    `,
  ],
  template: `
    <fieldset [attr.aria-describedby]="(hint() ? hintId : '') + (error() ? ' ' + errorId : '') || null">
      <legend class="label">{{ legend() }}</legend>
      @if (hint()) {
        <p class="hint" [id]="hintId">{{ hint() }}</p>
      }
      <div class="rows">
        @for (row of rows(); track $index; let index = $index) {
          <div class="row" [class.with-effect]="effects() !== null" role="group" [attr.aria-label]="rowLabel() + ' ' + (index + 1)">
            <div class="cell">
              <label [for]="id + '-key-' + index">{{ keyLabel() }}</label>
              <input
                class="control mono"
                [id]="id + '-key-' + index"
                [value]="row.key"
                spellcheck="false"
                autocomplete="off"
                [attr.aria-invalid]="rowErrors()[index] ? 'true' : null"
                [attr.aria-describedby]="rowErrors()[index] ? id + '-error-' + index : null"
                (input)="change(index, 'key', $event)"
              />
            </div>
            <div class="cell">
              <label [for]="id + '-value-' + index">{{ valueLabel() }}</label>
              <input class="control mono" [id]="id + '-value-' + index" [value]="row.value" spellcheck="false" autocomplete="off" (input)="change(index, 'value', $event)" />
            </div>
            @if (effects(); as effects) {
              <div class="cell">
                <label [for]="id + '-effect-' + index">{{ effectLabel() }}</label>
                <select class="control" [id]="id + '-effect-' + index" (change)="change(index, 'effect', $event)">
                  @for (option of effects; track option.value) {
                    <option [value]="option.value" [selected]="option.value === row.effect">{{ option.label }}</option>
                  }
                </select>
              </div>
            }
            <button class="remove" type="button" [attr.aria-label]="removeLabel() + ' ' + (index + 1)" (click)="remove(index)">×</button>
            @if (rowErrors()[index]) {
              <p class="error row-error" [id]="id + '-error-' + index">{{ rowErrors()[index] }}</p>
            }
          </div>
        } @empty {
          <p class="empty">{{ emptyText() }}</p>
        }
      </div>
      @if (error()) {
        <p class="error" [id]="errorId">{{ error() }}</p>
      }
      <button class="add" type="button" (click)="add()">+ {{ addLabel() }}</button>
    </fieldset>
  `,
})
export class KeyValueEditorComponent {
  readonly legend = input.required<string>();
  readonly rows = model<readonly KeyValueRow[]>([]);
  readonly keyLabel = input.required<string>();
  readonly valueLabel = input.required<string>();
  readonly addLabel = input.required<string>();
  readonly removeLabel = input.required<string>();
  /** Names a row for screen readers, followed by its number ("Label 2"). */
  readonly rowLabel = input.required<string>();
  readonly emptyText = input('');
  readonly hint = input<string | null>(null);
  /** Effects to choose from (taints); null for plain key/value rows. */
  readonly effects = input<readonly FieldOption[] | null>(null);
  readonly effectLabel = input('');
  /** An error per row (same order), or null. */
  readonly rowErrors = input<readonly (string | null)[]>([]);
  readonly error = input<string | null>(null);

  protected readonly id = uniqueId('kv');
  protected readonly hintId = `${this.id}-hint`;
  protected readonly errorId = `${this.id}-set-error`;

  protected add(): void {
    this.rows.update((rows) => [...rows, { key: '', value: '', effect: this.effects()?.[0]?.value ?? '' }]);
  }

  protected remove(index: number): void {
    this.rows.update((rows) => rows.filter((_, position) => position !== index));
  }

  protected change(index: number, part: keyof KeyValueRow, event: Event): void {
    const text = (event.target as HTMLInputElement | HTMLSelectElement).value;
    this.rows.update((rows) => rows.map((row, position) => (position === index ? { ...row, [part]: text } : row)));
  }
}
