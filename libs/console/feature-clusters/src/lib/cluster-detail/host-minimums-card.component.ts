import { ChangeDetectionStrategy, Component, computed, effect, inject, signal } from '@angular/core';
import { ClusterDetailStore, Session } from '@ccos/console/data-access';
import { ButtonDirective, TextFieldComponent } from '@ccos/console/ui';
import { I18n } from '@ccos/console/util-i18n';
import { clustersMessages } from '../clusters.messages';

type Field = 'cpus' | 'memoryGiB' | 'diskGiB';
/** The input field of setClusterHostMinimums each form field sends (its field errors come back under that name). */
const INPUT_FIELD: Record<Field, string> = { cpus: 'cpus', memoryGiB: 'memoryBytes', diskGiB: 'diskBytes' };
/** Label keys as typed: separated by commas or spaces. */
const keysOf = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);
const GIB = 2 ** 30;

/**
 * What every host added to the cluster must have at least: the current minimums, and (for an
 * ADMIN) the form that sets or clears them. A host below them is refused when it is added, each
 * failed check named (has-min-cpu-cores, has-min-memory, has-min-disk).
 */
@Component({
  selector: 'ccos-host-minimums-card',
  imports: [ButtonDirective, TextFieldComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <section class="ccos-card" aria-labelledby="minimums-heading" data-testid="host-minimums">
      <h2 id="minimums-heading">{{ t('minimums.heading') }}</h2>
      <p class="explain" data-testid="host-minimums-current">{{ current() }}</p>
      @if (isAdmin()) {
        <form class="minimums" (submit)="save($event)" [attr.aria-label]="t('minimums.heading')">
          <ccos-text-field name="cpus" inputMode="numeric" [label]="t('minimums.cpus')" [error]="errorOf('cpus')" [(value)]="values.cpus" />
          <ccos-text-field name="memoryGiB" inputMode="decimal" [label]="t('minimums.memoryGiB')" [error]="errorOf('memoryGiB')" [(value)]="values.memoryGiB" />
          <ccos-text-field name="diskGiB" inputMode="decimal" [label]="t('minimums.diskGiB')" [hint]="t('minimums.diskHint')" [error]="errorOf('diskGiB')" [(value)]="values.diskGiB" />
          <ccos-text-field name="labelKeys" [label]="t('minimums.labelKeys')" [hint]="t('minimums.labelKeysHint')" [error]="store.minimumsChange.fieldErrors()['labelKeys'] ?? null" [(value)]="labelKeys" />
          <div class="ccos-actions">
            <button ccosButton="primary" type="submit" [busy]="store.minimumsChange.sending()">{{ t('minimums.save') }}</button>
            <button ccosButton type="button" [disabled]="store.minimumsChange.sending()" (click)="clear()">{{ t('minimums.clear') }}</button>
          </div>
        </form>
      }
    </section>
  `,
  styles: `
    .explain { color: var(--ccos-text-muted); }
    .minimums { display: grid; gap: 0.75rem; margin-top: 0.75rem; }
  `,
})
export class HostMinimumsCardComponent {
  private readonly session = inject(Session);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(clustersMessages);
  protected readonly store = inject(ClusterDetailStore);
  protected readonly isAdmin = computed(() => this.session.allows('ADMIN'));
  protected readonly values: Record<Field, ReturnType<typeof signal<string>>> = { cpus: signal('0'), memoryGiB: signal('0'), diskGiB: signal('0') };
  protected readonly labelKeys = signal('');
  private readonly invalid = signal<ReadonlySet<Field>>(new Set());

  protected readonly current = computed(() => {
    const minimums = this.store.cluster()?.hostMinimums;
    if (!minimums) {
      return this.t('minimums.none');
    }
    const hardware = this.t('minimums.current', { cpus: minimums.cpus, memory: this.i18n.formatBytes(minimums.memoryBytes), disk: this.i18n.formatBytes(minimums.diskBytes) });
    return minimums.labelKeys.length > 0 ? `${hardware} ${this.t('minimums.currentLabels', { keys: minimums.labelKeys.join(', ') })}` : hardware;
  });

  constructor() {
    // The form starts from the stored minimums, and again after each save.
    effect(() => {
      const minimums = this.store.cluster()?.hostMinimums;
      this.values.cpus.set(String(minimums?.cpus ?? 0));
      this.values.memoryGiB.set(String(Number(((minimums?.memoryBytes ?? 0) / GIB).toFixed(2))));
      this.values.diskGiB.set(String(Number(((minimums?.diskBytes ?? 0) / GIB).toFixed(2))));
      this.labelKeys.set((minimums?.labelKeys ?? []).join(', '));
    });
  }

  protected errorOf(field: Field): string | null {
    return this.invalid().has(field) ? this.t('minimums.notANumber') : (this.store.minimumsChange.fieldErrors()[INPUT_FIELD[field]] ?? null);
  }

  protected async save(event: Event): Promise<void> {
    event.preventDefault();
    const number = (field: Field) => {
      const text = this.values[field]().trim();
      return /^\d+(\.\d+)?$/.test(text) && (field !== 'cpus' || /^\d+$/.test(text)) ? Number(text) : Number.NaN;
    };
    const fields: Field[] = ['cpus', 'memoryGiB', 'diskGiB'];
    this.invalid.set(new Set(fields.filter((field) => Number.isNaN(number(field)))));
    if (this.invalid().size > 0) {
      return;
    }
    await this.store.setHostMinimums({ cpus: number('cpus'), memoryBytes: Math.round(number('memoryGiB') * GIB), diskBytes: Math.round(number('diskGiB') * GIB), labelKeys: keysOf(this.labelKeys()) });
  }

  protected async clear(): Promise<void> {
    this.invalid.set(new Set());
    await this.store.setHostMinimums(null);
  }
}
