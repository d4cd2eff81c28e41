import { ChangeDetectionStrategy, Component, computed, inject, input, signal } from '@angular/core';
import { FormControl, ReactiveFormsModule } from '@angular/forms';
import { RouterLink } from '@angular/router';
import { ErrorReporter, type InventoryChangeView, InventoryStore, Session } from '@ccos/console/data-access';
import { ButtonDirective, ConfirmDialogComponent, FileTextFieldComponent, PageHeaderComponent, StatusBadgeComponent, type StatusTone, TextFieldComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe, commonMessages } from '@ccos/console/util-i18n';
import { inventoryMessages } from './inventory.messages';

type MessageKey = keyof (typeof inventoryMessages)['en'];
type KindKey = Extract<MessageKey, `kind.${string}`>;
const KIND_TONES: Record<InventoryChangeView['kind'], StatusTone> = { CREATE_POOL: 'info', ADD: 'ok', ADD_SPARE: 'ok', INSTALL: 'ok', RELABEL: 'info', REMOVE: 'warn', FORGET: 'neutral' };
const MAX_FILE_BYTES = 1024 * 1024;

interface Mark {
  readonly key: string;
  readonly value?: string | null;
  readonly effect?: string;
}

/**
 * The Inventory page: paste or open an inventory file (or load the cluster as one), see the plan
 * (adds, relabels, removals with their drain's preview, conflicts), and apply exactly that plan
 * (OPERATOR); then follow the batch and the removals it started on their own live pages.
 */
@Component({
  selector: 'ccos-inventory-page',
  imports: [ButtonDirective, ConfirmDialogComponent, FileTextFieldComponent, PageHeaderComponent, ReactiveFormsModule, RouterLink, ServerTextPipe, StatusBadgeComponent, TextFieldComponent],
  providers: [InventoryStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './inventory.page.html',
  styleUrl: './inventory.page.css',
})
export class InventoryPage {
  private readonly errors = inject(ErrorReporter);
  private readonly session = inject(Session);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(inventoryMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(InventoryStore);

  /** From the route (`/clusters/:clusterId/inventory`). */
  readonly clusterId = input.required<string>();

  protected readonly maxFileBytes = MAX_FILE_BYTES;
  protected readonly isOperator = computed(() => this.session.allows('OPERATOR'));
  protected readonly document = new FormControl('', { nonNullable: true });
  protected readonly password = new FormControl('', { nonNullable: true });
  protected readonly rejectedFile = signal<string | null>(null);
  protected readonly confirming = signal(false);

  protected readonly plan = this.store.plan;
  /** The hosts the plan enters (to install, or as spares of a pool): they need the SSH password. */
  protected readonly adds = computed(() => (this.plan()?.changes ?? []).filter((change) => change.kind === 'ADD' || change.kind === 'ADD_SPARE'));
  protected readonly summary = computed(() => {
    const plan = this.plan();
    const count = (kind: InventoryChangeView['kind']) => (plan?.changes ?? []).filter((change) => change.kind === kind).length;
    if (!plan) {
      return '';
    }
    const pools = count('CREATE_POOL') + count('ADD_SPARE') > 0 ? ` ${this.t('plan.pools', { pools: count('CREATE_POOL'), spares: count('ADD_SPARE') })}` : '';
    return `${this.t('plan.summary', { add: count('ADD'), install: count('INSTALL'), relabel: count('RELABEL'), remove: count('REMOVE'), forget: count('FORGET'), unchanged: plan.unchanged })}${pools}`;
  });
  protected readonly canApply = computed(() => {
    const plan = this.plan();
    return this.isOperator() && plan !== null && plan.changes.length > 0 && plan.conflicts.length === 0 && plan.changes.every((change) => change.removal?.allowed !== false);
  });
  protected readonly documentError = computed(() => {
    const rejected = this.rejectedFile();
    if (rejected) {
      return this.t('field.document.tooLarge', { name: rejected });
    }
    return this.store.planning.fieldErrors()['document'] ?? this.firstProblem(this.store.planning.problems());
  });
  protected readonly applyProblem = computed(() => this.firstProblem(this.store.applying.problems()));

  constructor() {
    // An edited file is another file: its plan is made again before it can be applied.
    this.document.valueChanges.subscribe(() => {
      this.rejectedFile.set(null);
      if (this.plan()) {
        this.store.clear();
      }
    });
  }

  protected async planFile(): Promise<void> {
    await this.store.planFile(this.document.value);
  }

  protected async loadCluster(): Promise<void> {
    const exported = await this.store.exportCluster(this.clusterId());
    if (exported.ok) {
      this.document.setValue(exported.value);
      await this.planFile();
    }
  }

  protected refuseFile(file: { readonly name: string }): void {
    this.rejectedFile.set(file.name);
  }

  protected async apply(): Promise<void> {
    const credentials = this.adds().map((change) => ({ hostname: change.hostname ?? '', password: this.password.value }));
    const outcome = await this.store.apply(credentials);
    // The password went to the API once; it is not kept in the form either way.
    this.password.setValue('');
    if (outcome.ok || outcome.problems.length > 0) {
      this.confirming.set(false);
    }
  }

  protected kindLabel(kind: InventoryChangeView['kind']): string {
    return this.t(`kind.${kind}` as KindKey);
  }

  protected kindTone(kind: InventoryChangeView['kind']): StatusTone {
    return KIND_TONES[kind];
  }

  /** Where the change's host goes, or the pool it creates. */
  protected subject(change: InventoryChangeView): string {
    return change.kind === 'CREATE_POOL' ? this.t('pool.subject', { pool: change.pool ?? '' }) : change.hostname ?? '';
  }

  protected where(change: InventoryChangeView): string {
    if (change.kind === 'CREATE_POOL' && change.poolDefinition) {
      const pool = change.poolDefinition;
      return this.t('pool.definition', { min: pool.minSize, max: pool.maxSize, cpus: pool.cpuCores, memory: this.i18n.formatBytes(pool.memoryBytes) });
    }
    const ip = change.ip ?? '';
    return change.kind === 'ADD_SPARE' ? this.t('pool.spareOf', { ip, pool: change.pool ?? '' }) : ip;
  }

  protected marks(change: InventoryChangeView): string {
    const now = this.markText([...change.labels, ...change.taints]);
    return change.kind === 'RELABEL' ? this.t('marks.change', { from: this.markText([...change.labelsBefore, ...change.taintsBefore]), to: now }) : now;
  }

  private markText(marks: readonly Mark[]): string {
    return marks.map((mark) => (mark.effect ? `${mark.key}${mark.value ? `=${mark.value}` : ''}:${mark.effect}` : `${mark.key}=${mark.value ?? ''}`)).join(', ') || this.t('marks.none');
  }

  private firstProblem(problems: ReturnType<InventoryStore['planning']['problems']>): string | null {
    const problem = problems.find((entry) => entry.field !== 'document') ?? null;
    return problem ? this.errors.messageOf(problem) : null;
  }
}
