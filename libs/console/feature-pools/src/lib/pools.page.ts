import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal } from '@angular/core';
import { FormControl, FormGroup, ReactiveFormsModule } from '@angular/forms';
import { ErrorReporter, type NodeGroupHostView, type NodeGroupView, NodeGroupsStore, Session } from '@ccos/console/data-access';
import { ButtonDirective, ConfirmDialogComponent, DataStateComponent, LiveIndicatorComponent, PageHeaderComponent, StatusBadgeComponent, type StatusTone, TextFieldComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe, commonMessages } from '@ccos/console/util-i18n';
import { poolsMessages } from './pools.messages';

const STATE_TONES: Record<string, StatusTone> = {
  CHECKING: 'info',
  SPARE: 'ok',
  RESERVED: 'info',
  RUNNING: 'ok',
  DELETING: 'warn',
  REINSTALL_REQUIRED: 'error',
  UNUSABLE: 'error',
};
const GIB = 1024 ** 3;
type MessageKey = keyof (typeof poolsMessages)['en'];
type StateKey = Extract<MessageKey, `state.${string}`>;
type KindKey = Extract<MessageKey, `kind.${string}`>;

/** What the page is asking the user to confirm or fill in. */
type Dialog =
  | { readonly kind: 'create' }
  | { readonly kind: 'spare'; readonly group: NodeGroupView }
  | { readonly kind: 'scaleUp'; readonly group: NodeGroupView }
  | { readonly kind: 'scaleDown'; readonly group: NodeGroupView; readonly host: NodeGroupHostView };

const text = (value = '') => new FormControl(value, { nonNullable: true });

/**
 * The Pools page: each node group's spares by state, its sizes, and its scale-ups and scale-downs,
 * live; an ADMIN creates groups, an OPERATOR adds spares and scales a group up or down by hand.
 */
@Component({
  selector: 'ccos-pools-page',
  imports: [ButtonDirective, ConfirmDialogComponent, ReactiveFormsModule, ServerTextPipe, DataStateComponent, LiveIndicatorComponent, PageHeaderComponent, StatusBadgeComponent, TextFieldComponent],
  providers: [NodeGroupsStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './pools.page.html',
  styleUrl: './pools.page.css',
})
export class PoolsPage {
  private readonly errors = inject(ErrorReporter);
  private readonly session = inject(Session);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(poolsMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(NodeGroupsStore);

  /** From the route (`/clusters/:clusterId/pools`). */
  readonly clusterId = input.required<string>();

  protected readonly isAdmin = computed(() => this.session.allows('ADMIN'));
  protected readonly isOperator = computed(() => this.session.allows('OPERATOR'));
  protected readonly dialog = signal<Dialog | null>(null);
  protected readonly groupForm = new FormGroup({ name: text(), minSize: text('0'), maxSize: text('3'), cpuCores: text('4'), memoryGiB: text('16') });
  protected readonly spareForm = new FormGroup({ hostname: text(), ip: text(), sshPort: text('22'), sshUser: text('root'), password: text() });
  /** A number field that is no whole number, by field: said before anything is sent. */
  private readonly numberProblems = signal<Readonly<Record<string, string>>>({});

  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  protected readonly busy = computed(() => this.store.creation.sending() || this.store.spareAddition.sending() || this.store.scaling.sending());

  constructor() {
    effect(() => this.store.select(this.clusterId()));
  }

  protected groupError(field: string): string | null {
    return this.numberProblems()[field] ?? this.store.creation.fieldErrors()[field] ?? null;
  }

  protected spareError(field: string): string | null {
    return this.numberProblems()[field] ?? this.store.spareAddition.fieldErrors()[field] ?? null;
  }

  protected openCreate(): void {
    this.store.creation.clear();
    this.numberProblems.set({});
    this.groupForm.reset();
    this.dialog.set({ kind: 'create' });
  }

  protected openSpare(group: NodeGroupView): void {
    this.store.spareAddition.clear();
    this.numberProblems.set({});
    this.spareForm.reset();
    this.dialog.set({ kind: 'spare', group });
  }

  protected openScaleUp(group: NodeGroupView): void {
    this.dialog.set({ kind: 'scaleUp', group });
  }

  protected openScaleDown(group: NodeGroupView, host: NodeGroupHostView): void {
    this.dialog.set({ kind: 'scaleDown', group, host });
  }

  protected close(): void {
    this.spareForm.controls.password.setValue('');
    this.dialog.set(null);
  }

  protected async confirm(): Promise<void> {
    const dialog = this.dialog();
    if (!dialog) {
      return;
    }
    const outcome = await this.send(dialog);
    if (outcome) {
      this.close();
    }
  }

  private async send(dialog: Dialog): Promise<boolean> {
    switch (dialog.kind) {
      case 'create': {
        const form = this.groupForm.getRawValue();
        const numbers = this.wholeNumbers({ minSize: form.minSize, maxSize: form.maxSize, cpuCores: form.cpuCores, memoryGiB: form.memoryGiB });
        if (!numbers) {
          return false;
        }
        return (await this.store.createGroup({
          clusterId: this.clusterId(),
          name: form.name.trim(),
          minSize: numbers['minSize'] ?? 0,
          maxSize: numbers['maxSize'] ?? 0,
          profile: { cpuCores: numbers['cpuCores'] ?? 0, memoryBytes: (numbers['memoryGiB'] ?? 0) * GIB },
        })).ok;
      }
      case 'spare': {
        const form = this.spareForm.getRawValue();
        const numbers = this.wholeNumbers({ sshPort: form.sshPort });
        if (!numbers) {
          return false;
        }
        const outcome = await this.store.addSpare({ groupId: dialog.group.id, hostname: form.hostname.trim(), ip: form.ip.trim(), sshPort: numbers['sshPort'] ?? 22, sshUser: form.sshUser.trim(), password: form.password });
        // The password went to the API once; it is not kept in the form either way.
        this.spareForm.controls.password.setValue('');
        return outcome.ok;
      }
      case 'scaleUp':
        return (await this.store.scaleUp(dialog.group.id, 1)).ok;
      case 'scaleDown':
        return (await this.store.scaleDown(dialog.group.id, dialog.host.nodeId)).ok;
    }
  }

  /** The fields as whole numbers, or null (each field that is not one says so). */
  private wholeNumbers(fields: Record<string, string>): Record<string, number> | null {
    const problems: Record<string, string> = {};
    const numbers: Record<string, number> = {};
    for (const [field, value] of Object.entries(fields)) {
      const number = Number(value.trim());
      if (value.trim() === '' || !Number.isInteger(number) || number < 0) {
        problems[field] = this.t('form.wholeNumber');
      } else {
        numbers[field] = number;
      }
    }
    this.numberProblems.set(problems);
    return Object.keys(problems).length > 0 ? null : numbers;
  }

  protected dialogHeading(dialog: Dialog): string {
    switch (dialog.kind) {
      case 'create':
        return this.t('create.heading');
      case 'spare':
        return this.t('spare.heading', { group: dialog.group.name });
      case 'scaleUp':
        return this.t('scaleUp.heading', { group: dialog.group.name });
      case 'scaleDown':
        return this.t('scaleDown.heading', { group: dialog.group.name, host: dialog.host.hostname });
    }
  }

  protected dialogAction(dialog: Dialog): string {
    return this.t(`${dialog.kind}.action`);
  }

  protected stateTone(host: NodeGroupHostView): StatusTone {
    return STATE_TONES[host.state] ?? 'neutral';
  }

  protected stateLabel(state: string): string {
    return this.t(`state.${state}` as StateKey);
  }

  protected kindLabel(kind: string): string {
    return this.t(`kind.${kind}` as KindKey);
  }

  protected gib(bytes: number): string {
    return String(Math.round((bytes / GIB) * 10) / 10);
  }
}
