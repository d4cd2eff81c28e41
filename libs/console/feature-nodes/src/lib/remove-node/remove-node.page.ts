import { ChangeDetectionStrategy, Component, computed, effect, inject, input } from '@angular/core';
import { ReactiveFormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { ErrorReporter, NodeRemovalStore, Notifications } from '@ccos/console/data-access';
import {
  ButtonDirective,
  type CheckItem,
  CheckListComponent,
  CheckboxFieldComponent,
  DataStateComponent,
  PageHeaderComponent,
  StatusBadgeComponent,
  TextFieldComponent,
} from '@ccos/console/ui';
import { I18n, commonMessages, ServerTextPipe } from '@ccos/console/util-i18n';
import type { ForcefulDrainOption, RemovalSafetyRule } from '@ccos/shared/api-schema';
import { type NodeStatus, allowedFrom } from '@ccos/shared/domain';
import { nodesMessages } from '../nodes.messages';
import { removalMessages } from '../removal.messages';
import { type RemovalNumberField, RemoveNodeForm } from './remove-node.form';

/** Options are asked about once the user stops changing them for this long. */
const PREVIEW_SETTLE_MS = 400;

/**
 * 移除节点 (OPERATOR): the drain options, what a removal with them would do now (safety
 * checks, pods evicted, skipped or refused, budgets, room on the other workers, SSH access),
 * and the node name typed to confirm. The removal then runs on the node page, live.
 */
@Component({
  selector: 'ccos-remove-node-page',
  imports: [ServerTextPipe, RouterLink, ButtonDirective, CheckListComponent, CheckboxFieldComponent, DataStateComponent, PageHeaderComponent, ReactiveFormsModule, StatusBadgeComponent, TextFieldComponent],
  providers: [NodeRemovalStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './remove-node.page.html',
  styleUrl: './remove-node.page.css',
})
export class RemoveNodePage {
  /** From the route (`/clusters/:clusterId/nodes/:nodeId/remove`). */
  readonly clusterId = input.required<string>();
  readonly nodeId = input.required<string>();

  private readonly router = inject(Router);
  private readonly notifications = inject(Notifications);
  private readonly errors = inject(ErrorReporter);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(removalMessages);
  protected readonly nodeText = this.i18n.translator(nodesMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(NodeRemovalStore);
  protected readonly form = new RemoveNodeForm();

  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  protected readonly removable = computed(() => {
    const node = this.store.node();
    return node !== null && allowedFrom('REMOVAL_STARTED').includes(node.status);
  });
  protected readonly hostname = computed(() => this.store.node()?.hostname ?? '');
  protected readonly nameConfirmed = computed(() => this.form.confirmHostname().trim() === this.hostname() && this.hostname() !== '');
  protected readonly safety = computed<readonly CheckItem[]>(() =>
    (this.store.preview()?.safety ?? []).map((check) => ({
      label: check.blocking ? this.ruleLabel(check.rule) : `${this.ruleLabel(check.rule)} (${this.t('preview.warning')})`,
      passed: check.passed,
      detail: this.i18n.server(check.messageCode, check.messageParams, check.message),
    })),
  );
  protected readonly canSubmit = computed(() => {
    const preview = this.store.preview();
    return this.nameConfirmed() && preview !== null && preview.allowed && this.form.options() !== null && !this.store.previewLoading() && !this.store.saving();
  });
  protected readonly confirmError = computed(() => {
    const server = this.store.fieldErrors()['confirmHostname'];
    if (server) {
      return server;
    }
    const typed = this.form.confirmHostname().trim();
    return typed && !this.nameConfirmed() && typed.length >= this.hostname().length ? this.t('confirm.mismatch') : null;
  });
  /**
   * Under each forceful option, the pods it would delete for good, from the preview (which says
   * so whatever is ticked): known before the option is ticked. Empty until the preview answered.
   */
  protected readonly deletedBy = computed<Partial<Record<ForcefulDrainOption, string>>>(() => {
    const preview = this.store.preview();
    if (!preview) {
      return {};
    }
    const texts: Partial<Record<ForcefulDrainOption, string>> = {};
    for (const option of ['FORCE', 'DELETE_EMPTY_DIR_DATA'] as const) {
      const pods = preview.pods
        .filter((pod) => pod.deletedWith.includes(option))
        .map((pod) => (pod.deletedWith.length > 1 ? this.t('options.deletesWithBoth', { pod: pod.pod }) : pod.pod));
      texts[option] = pods.length > 0 ? this.t('options.deletes', { pods: pods.join(', ') }) : this.t('options.deletesNothing');
    }
    return texts;
  });
  /** The API's problems with the options, above the button (the typed name shows its own; problems naming no field are toasts). */
  protected readonly startProblems = computed(() => this.store.startProblems().filter((problem) => problem.field !== null && !problem.field.endsWith('confirmHostname')));

  constructor() {
    effect(() => this.store.select(this.nodeId()));
    // Ask again when the options (or a correctly typed name) settle; the newest answer wins.
    effect((onCleanup) => {
      const options = this.form.options();
      const confirmed = this.nameConfirmed();
      if (!options || !this.removable()) {
        return;
      }
      const timer = setTimeout(() => void this.store.loadPreview(confirmed ? { ...options, confirmHostname: this.hostname() } : options), PREVIEW_SETTLE_MS);
      onCleanup(() => clearTimeout(timer));
    });
  }

  protected statusLabel(status: NodeStatus): string {
    return this.nodeText(`status.${status}`);
  }

  protected ruleLabel(rule: RemovalSafetyRule): string {
    return this.t(`rule.${rule}`);
  }

  protected numberError(field: RemovalNumberField): string | null {
    return this.store.fieldErrors()[field] ?? (this.form.numberProblems()[field] ? this.t('options.invalidNumber') : null);
  }

  protected drainActionLabel(action: 'EVICT' | 'SKIP' | 'REFUSE'): string {
    return this.t(`drainAction.${action}`);
  }

  protected cpu(millicores: number): string {
    return `${(millicores / 1000).toFixed(millicores % 1000 === 0 ? 0 : 2)}`;
  }

  protected problemText(problem: Parameters<ErrorReporter['messageOf']>[0]): string {
    return `${this.errors.titleOf(problem)} — ${this.errors.messageOf(problem)}`;
  }

  protected async removeNode(event: Event): Promise<void> {
    event.preventDefault();
    const options = this.form.options();
    if (!options || !this.canSubmit()) {
      return;
    }
    const hostname = this.hostname();
    const outcome = await this.store.remove({ ...options, confirmHostname: hostname });
    if (outcome.ok) {
      this.notifications.show('success', () => this.t('done', { hostname }));
      await this.router.navigate(['/clusters', this.clusterId(), 'nodes', this.nodeId()]);
    }
  }
}
