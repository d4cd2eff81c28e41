import { ChangeDetectionStrategy, Component, computed, inject, input, signal } from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { NonNullableFormBuilder, ReactiveFormsModule } from '@angular/forms';
import { Router } from '@angular/router';
import { type AddNodesResult, NodeBatchStore, Notifications } from '@ccos/console/data-access';
import { ButtonDirective, PageHeaderComponent, TextFieldComponent } from '@ccos/console/ui';
import { I18n } from '@ccos/console/util-i18n';
import { type CheckedRow, checkBulkRows, expandAddressRange, parseHostList } from '@ccos/shared/domain';
import { batchesMessages } from '../batches.messages';

/** A row as the table shows it: what was read and its problems (the console's own check, or the API's). */
interface RowView {
  readonly line: number;
  readonly hostname: string;
  readonly ip: string;
  readonly sshPort: number;
  readonly sshUser: string;
  readonly extras: string;
  readonly problems: readonly string[];
}

/**
 * 批量录入节点 (OPERATOR): a pasted or uploaded list, or an address range with a hostname
 * pattern, and one shared SSH password. The console checks each row as it is typed (same
 * rules as the API, from @ccos/shared/domain); the API's answer (duplicates in the cluster
 * included) replaces it on Check or Add. The password is dropped after every send.
 */
/** The column (or part of the form) each field of a row's problem belongs to. */
const BULK_FIELD_COLUMNS: Readonly<Record<string, 'bulk.col.line' | 'bulk.col.hostname' | 'bulk.col.ip' | 'bulk.col.port' | 'bulk.col.user' | 'bulk.col.labels' | 'bulk.field.credentials'>> = {
  row: 'bulk.col.line', hostname: 'bulk.col.hostname', ip: 'bulk.col.ip', sshPort: 'bulk.col.port', sshUser: 'bulk.col.user',
  labels: 'bulk.col.labels', taints: 'bulk.col.labels', credentials: 'bulk.field.credentials',
};

@Component({
  selector: 'ccos-bulk-add-page',
  imports: [ButtonDirective, PageHeaderComponent, ReactiveFormsModule, TextFieldComponent],
  providers: [NodeBatchStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    .form { display: grid; gap: 1rem; }
    .row { display: flex; gap: 1rem; flex-wrap: wrap; align-items: flex-end; }
    table { width: 100%; border-collapse: collapse; }
    th, td { text-align: left; padding: 0.25rem 0.5rem; border-bottom: 1px solid var(--ccos-border, #ddd); vertical-align: top; }
    tr.invalid td { background: var(--ccos-danger-bg, #fdecea); }
    .problem { color: var(--ccos-danger, #b00020); display: block; }
    .actions { display: flex; gap: 0.5rem; flex-wrap: wrap; }
    fieldset { border: 0; padding: 0; display: flex; gap: 1rem; }
  `,
  template: `
    <ccos-page-header [heading]="t('bulk.heading')" [description]="t('bulk.description')" [backLink]="['/clusters', clusterId(), 'nodes']" [backLabel]="t('bulk.back')" />
    <form class="form" novalidate (submit)="$event.preventDefault()">
      <section class="ccos-card" aria-labelledby="bulk-source">
        <h2 id="bulk-source">{{ t('bulk.source') }}</h2>
        <fieldset>
          <legend class="visually-hidden">{{ t('bulk.source') }}</legend>
          <label><input type="radio" name="source" value="list" [checked]="value().source === 'list'" (change)="form.controls.source.setValue('list')" /> {{ t('bulk.source.list') }}</label>
          <label><input type="radio" name="source" value="range" [checked]="value().source === 'range'" (change)="form.controls.source.setValue('range')" /> {{ t('bulk.source.range') }}</label>
        </fieldset>
        @if (value().source === 'list') {
          <ccos-text-field name="list" multiline monospace [rows]="8" [label]="t('bulk.list')" [hint]="t('bulk.list.hint')" placeholder="w-1,198.18.0.10" [formControl]="form.controls.list" />
          <label>{{ t('bulk.upload') }} <input type="file" name="listFile" accept=".csv,.txt,text/csv,text/plain" (change)="readFile($event)" /></label>
        } @else {
          <div class="row">
            <ccos-text-field name="range" monospace [label]="t('bulk.range')" [hint]="t('bulk.range.hint')" placeholder="198.18.0.10-198.18.0.29" [formControl]="form.controls.range" />
            <ccos-text-field name="pattern" monospace [label]="t('bulk.pattern')" [hint]="t('bulk.pattern.hint', { n: '{n}', octet: '{octet}' })" placeholder="w-{n}" [formControl]="form.controls.pattern" />
            <ccos-text-field name="firstNumber" inputMode="numeric" [label]="t('bulk.firstNumber')" [formControl]="form.controls.firstNumber" />
          </div>
          @if (rangeProblem(); as problem) {
            <p class="problem" role="alert" data-testid="range-problem">{{ problem }}</p>
          }
        }
      </section>

      <section class="ccos-card" aria-labelledby="bulk-login">
        <h2 id="bulk-login">{{ t('bulk.login') }}</h2>
        <div class="row">
          <ccos-text-field name="sshUser" monospace autocomplete="off" [label]="t('bulk.sshUser')" [formControl]="form.controls.sshUser" />
          <ccos-text-field name="sshPort" inputMode="numeric" [label]="t('bulk.sshPort')" [formControl]="form.controls.sshPort" />
          <ccos-text-field name="password" type="password" autocomplete="new-password" [label]="t('bulk.password')" [formControl]="form.controls.password" />
        </div>
      </section>

      <section class="ccos-card" aria-labelledby="bulk-rows">
        <h2 id="bulk-rows">{{ t('bulk.rows') }}</h2>
        @for (problem of requestProblems(); track $index) {
          <p class="problem" role="alert">{{ t('bulk.requestProblem') }}: {{ problem }}</p>
        }
        @if (rows().length === 0) {
          <p>{{ t('bulk.noRows') }}</p>
        } @else {
          <p data-testid="rows-summary">{{ t('bulk.rowsSummary', { total: rows().length, refused: refused() }) }}</p>
          <table data-testid="bulk-rows">
            <thead>
              <tr>
                <th>{{ t('bulk.col.line') }}</th><th>{{ t('bulk.col.hostname') }}</th><th>{{ t('bulk.col.ip') }}</th><th>{{ t('bulk.col.port') }}</th>
                <th>{{ t('bulk.col.user') }}</th><th>{{ t('bulk.col.labels') }}</th><th>{{ t('bulk.col.problems') }}</th>
              </tr>
            </thead>
            <tbody>
              @for (row of rows(); track row.line) {
                <tr [class.invalid]="row.problems.length > 0" [attr.data-line]="row.line">
                  <td>{{ row.line }}</td><td>{{ row.hostname }}</td><td>{{ row.ip }}</td><td>{{ row.sshPort }}</td><td>{{ row.sshUser }}</td><td>{{ row.extras }}</td>
                  <td>
                    @for (problem of row.problems; track $index) {
                      <span class="problem">{{ problem }}</span>
                    } @empty {
                      {{ t('bulk.ok') }}
                    }
                  </td>
                </tr>
              }
            </tbody>
          </table>
        }
        @if (nothingAdded()) {
          <p class="ccos-alert ccos-alert--info" role="status">{{ t('bulk.nothingAdded') }}</p>
        }
        <div class="actions">
          <button type="button" ccosButton [busy]="store.saving()" (click)="checkRows()">{{ t('bulk.check') }}</button>
          <button type="button" ccosButton="primary" [busy]="store.saving()" (click)="addRows(false)">{{ t('bulk.addAll') }}</button>
          <button type="button" ccosButton [busy]="store.saving()" [disabled]="refused() === rows().length" (click)="addRows(true)">{{ t('bulk.addValid') }}</button>
        </div>
      </section>
    </form>
  `,
})
export class BulkAddPage {
  /** From the route (`/clusters/:clusterId/nodes/bulk`). */
  readonly clusterId = input.required<string>();

  private readonly router = inject(Router);
  private readonly notifications = inject(Notifications);
  protected readonly store = inject(NodeBatchStore);
  private readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(batchesMessages);

  protected readonly form = inject(NonNullableFormBuilder).group({
    source: ['list' as 'list' | 'range'],
    list: [''],
    range: [''],
    pattern: ['w-{n}'],
    firstNumber: ['1'],
    sshUser: ['root'],
    sshPort: ['22'],
    password: [''],
  });
  /** The form's value as a signal: the rows are checked again as it is typed. */
  protected readonly value = signal(this.form.getRawValue());
  /** The API's answer for the input as it was sent; editing the input drops it. */
  private readonly answer = signal<{ readonly key: string; readonly result: AddNodesResult } | null>(null);
  protected readonly nothingAdded = signal(false);

  private readonly inputKey = computed(() => JSON.stringify([this.value().source, this.value().list, this.value().range, this.value().pattern, this.value().firstNumber, this.value().sshUser, this.value().sshPort]));

  /** The console's own check: the same rules as the API, without the cluster's hosts. */
  private readonly local = computed<{ rows: CheckedRow[]; problem: string | null }>(() => {
    const defaults = { sshPort: Number(this.value().sshPort) || 22, sshUser: this.value().sshUser || 'root' };
    if (this.value().source === 'list') {
      return { rows: checkBulkRows(parseHostList(this.value().list, defaults), { hostnames: new Set(), ips: new Set() }), problem: null };
    }
    if (this.value().range.trim() === '') {
      return { rows: [], problem: null };
    }
    const expanded = expandAddressRange({ range: this.value().range, hostnamePattern: this.value().pattern, firstNumber: Number(this.value().firstNumber) }, defaults);
    return expanded.ok ? { rows: checkBulkRows(expanded.rows, { hostnames: new Set(), ips: new Set() }), problem: null } : { rows: [], problem: this.i18n.server(expanded.coded.code, expanded.coded.params, expanded.problem) };
  });

  protected readonly rangeProblem = computed(() => (this.value().source === 'range' ? this.local().problem : null));

  protected readonly rows = computed<readonly RowView[]>(() => {
    const answer = this.answer();
    if (answer && answer.key === this.inputKey()) {
      return answer.result.rows.map((row) => ({
        line: row.line, hostname: row.hostname, ip: row.ip, sshPort: row.sshPort, sshUser: row.sshUser,
        extras: extrasOf(row.labels, row.taints),
        problems: row.problems.map((problem) => this.problemText(problem.field, problem.messageCode, problem.messageParams, problem.message)),
      }));
    }
    return this.local().rows.map(({ row, problems }) => ({
      line: row.line, hostname: row.hostname, ip: row.ip, sshPort: row.sshPort, sshUser: row.sshUser,
      extras: extrasOf(row.labels, row.taints),
      problems: problems.map((problem) => this.problemText(problem.field, problem.coded?.code, problem.coded?.params, problem.message)),
    }));
  });
  protected readonly refused = computed(() => this.rows().filter((row) => row.problems.length > 0).length);
  protected readonly requestProblems = computed(() => {
    const answer = this.answer();
    return answer && answer.key === this.inputKey() ? answer.result.problems.map((problem) => this.i18n.server(problem.messageCode, problem.messageParams, problem.message)) : [];
  });

  constructor() {
    this.form.valueChanges.pipe(takeUntilDestroyed()).subscribe(() => this.value.set(this.form.getRawValue()));
  }

  /** A row's problem in the user's language: the column it is about, then what is wrong. */
  private problemText(field: string, code: string | null | undefined, params: unknown, text: string): string {
    const column = BULK_FIELD_COLUMNS[field];
    return `${column ? this.t(column) : field}: ${this.i18n.server(code, params, text)}`;
  }

  protected readFile(event: Event): void {
    const file = (event.target as HTMLInputElement).files?.[0];
    if (!file) {
      return;
    }
    void file.text().then((text) => {
      this.form.controls.source.setValue('list');
      this.form.controls.list.setValue(text);
    });
  }

  protected async checkRows(): Promise<void> {
    await this.send({ dryRun: true });
  }

  protected async addRows(validOnly: boolean): Promise<void> {
    const result = await this.send({ addValidRows: validOnly });
    if (result?.batch) {
      const count = result.added;
      this.notifications.show('success', () => this.t('bulk.added', { count }));
      await this.router.navigate(['/clusters', this.clusterId(), 'nodes', 'batches', result.batch.id]);
    } else if (result) {
      this.nothingAdded.set(true);
    }
  }

  private async send(mode: { dryRun?: boolean; addValidRows?: boolean }): Promise<AddNodesResult | null> {
    const key = this.inputKey();
    const password = this.value().password;
    if (!mode.dryRun) {
      // Dropped before the answer arrives: the only copy left is in the request being sent.
      this.form.controls.password.setValue('');
    }
    this.nothingAdded.set(false);
    const outcome = await this.store.add({
      clusterId: this.clusterId(),
      ...(this.value().source === 'list' ? { list: this.value().list } : { range: { range: this.value().range, hostnamePattern: this.value().pattern, firstNumber: Number(this.value().firstNumber) || 0 } }),
      sshUser: this.value().sshUser,
      sshPort: Number(this.value().sshPort) || 22,
      password: password || null,
      dryRun: mode.dryRun ?? false,
      addValidRows: mode.addValidRows ?? false,
    });
    if (!outcome.ok) {
      return null;
    }
    this.answer.set({ key, result: outcome.value });
    return outcome.value;
  }
}

function extrasOf(labels: ReadonlyArray<{ key: string; value: string }>, taints: ReadonlyArray<{ key: string; value?: string | null; effect: string }>): string {
  return [...labels.map((label) => `${label.key}=${label.value}`), ...taints.map((taint) => `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`)].join(' ');
}
