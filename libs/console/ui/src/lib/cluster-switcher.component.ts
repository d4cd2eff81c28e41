import { ChangeDetectionStrategy, Component, input, output } from '@angular/core';
import { uniqueId } from './unique-id';

export interface ClusterChoice {
  readonly id: string;
  readonly name: string;
}

/** The header's cluster picker: a compact labelled select; choosing emits the id (null for "all clusters"). */
@Component({
  selector: 'ccos-cluster-switcher',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: inline-flex; align-items: center; gap: 0.5rem; min-width: 0; }
    label { font-size: 0.85rem; opacity: 0.85; white-space: nowrap; }
    select {
      font: inherit; font-size: 0.9rem; max-width: 14rem; padding: 0.3rem 0.5rem; color: inherit;
      background: rgb(255 255 255 / 10%); border: 1px solid rgb(255 255 255 / 35%); border-radius: var(--ccos-radius);
    }
    option { color: var(--ccos-text); background: var(--ccos-surface); }
  `,
  template: `
    <label [for]="id">{{ label() }}</label>
    <select [id]="id" (change)="choose($event)">
      <option value="" [selected]="selectedId() === null">{{ allLabel() }}</option>
      @for (cluster of clusters(); track cluster.id) {
        <option [value]="cluster.id" [selected]="cluster.id === selectedId()">{{ cluster.name }}</option>
      }
    </select>
  `,
})
export class ClusterSwitcherComponent {
  readonly clusters = input.required<readonly ClusterChoice[]>();
  readonly selectedId = input<string | null>(null);
  readonly label = input.required<string>();
  readonly allLabel = input.required<string>();
  readonly clusterSelected = output<string | null>();

  protected readonly id = uniqueId('cluster-switcher');

  protected choose(event: Event): void {
    const value = (event.target as HTMLSelectElement).value;
    this.clusterSelected.emit(value === '' ? null : value);
  }
}
