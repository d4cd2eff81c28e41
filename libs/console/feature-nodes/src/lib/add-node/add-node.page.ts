import { DOCUMENT } from '@angular/common';
import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal, viewChildren } from '@angular/core';
import { ReactiveFormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { type ApiProblem, ClusterDetailStore, ErrorReporter, NodeEntryStore, Notifications, Session } from '@ccos/console/data-access';
import {
  ButtonDirective,
  CheckboxFieldComponent,
  ChoiceFieldComponent,
  type FieldOption,
  FileTextFieldComponent,
  KeyValueEditorComponent,
  PageHeaderComponent,
  TextFieldComponent,
} from '@ccos/console/ui';
import { I18n } from '@ccos/console/util-i18n';
import { TAINT_EFFECTS } from '@ccos/shared/domain';
import { nodesMessages } from '../nodes.messages';
import type { AuthMethod } from '../ssh-credentials.form';
import { type AddNodeField, AddNodeForm, type RowProblem } from './add-node.form';

/** Fields in the order they appear, for focusing the first invalid one. */
const FIELD_ORDER: readonly AddNodeField[] = ['hostname', 'ip', 'sshPort', 'sshUser', 'password', 'privateKey', 'passphrase', 'labels', 'taints'];
/** The API's field for re-adding a name removed after it joined (its refusal names it). */
const ACKNOWLEDGE_OLD_CERTIFICATES = 'acknowledgeOldCertificates';
/** A private key is a few KiB; anything much larger is the wrong file. */
const MAX_KEY_BYTES = 32 * 1024;

/**
 * 录入节点 (OPERATOR): a host's name, address and SSH login, with labels and taints for the
 * Node. Rules the console can check run before sending; the API's field errors appear next
 * to the field they name. The password or key is dropped from the form after every send,
 * whatever the outcome, and is never stored in the browser.
 */
@Component({
  selector: 'ccos-add-node-page',
  imports: [RouterLink, ButtonDirective, CheckboxFieldComponent, ChoiceFieldComponent, FileTextFieldComponent, KeyValueEditorComponent, PageHeaderComponent, ReactiveFormsModule, TextFieldComponent],
  providers: [NodeEntryStore, ClusterDetailStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './add-node.page.html',
  styleUrl: './add-node.page.css',
})
export class AddNodePage {
  /** From the route (`/clusters/:clusterId/nodes/new`). */
  readonly clusterId = input.required<string>();

  private readonly router = inject(Router);
  private readonly notifications = inject(Notifications);
  private readonly errors = inject(ErrorReporter);
  protected readonly store = inject(NodeEntryStore);
  protected readonly cluster = inject(ClusterDetailStore);
  private readonly session = inject(Session);
  private readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(nodesMessages);
  protected readonly form = new AddNodeForm();
  protected readonly credentials = this.form.credentials;

  private readonly submitted = signal(false);
  private readonly visited = signal<ReadonlySet<AddNodeField>>(new Set());
  /** The non-secret fields as last sent, so an API field error disappears once that field is edited. */
  private readonly sent = signal<Readonly<Record<AddNodeField, string>> | null>(null);
  /** A key file that was refused, by name. */
  protected readonly rejectedFile = signal<string | null>(null);
  protected readonly maxKeyBytes = MAX_KEY_BYTES;
  /** The last send failed after the secret was dropped: say why the field is empty. */
  protected readonly secretCleared = signal(false);
  private readonly document = inject(DOCUMENT);
  private readonly textFields = viewChildren(TextFieldComponent);
  private readonly fileFields = viewChildren(FileTextFieldComponent);

  protected readonly authMethods = computed<readonly FieldOption[]>(() => [
    { value: 'PASSWORD', label: this.t('auth.PASSWORD') },
    { value: 'PRIVATE_KEY', label: this.t('auth.PRIVATE_KEY') },
  ]);
  protected readonly effects = computed<readonly FieldOption[]>(() => TAINT_EFFECTS.map((effect) => ({ value: effect, label: effect })));
  protected readonly labelRowErrors = computed(() => this.rowErrors(this.form.labelRowProblems()));
  protected readonly taintRowErrors = computed(() => this.rowErrors(this.form.taintRowProblems()));
  /** API problems naming a field this form does not show; problems naming none are toasts. */
  protected readonly formProblems = computed(() =>
    this.store.problems().filter((problem) => problem.field !== null && !FIELD_ORDER.includes(fieldKey(problem.field)) && !asksForAcknowledgement(problem)),
  );
  /**
   * The API refused the host name because this cluster removed a node of that name after it had
   * joined: what it said (the name, when it was removed, how long its certificates may be valid),
   * while the name is still the one sent. An ADMIN may confirm the machine is wiped or gone.
   */
  protected readonly oldCertificates = computed(() => {
    const problem = this.store.problems().find(asksForAcknowledgement);
    const params = (problem?.messageParams ?? {}) as { hostname?: unknown; removedAt?: unknown; until?: unknown };
    if (!problem || this.sent()?.hostname !== this.form.snapshot().hostname) {
      return null;
    }
    return {
      hostname: typeof params.hostname === 'string' ? params.hostname : this.form.snapshot().hostname,
      removedAt: this.i18n.formatDateTime(typeof params.removedAt === 'string' ? params.removedAt : null),
      until: this.i18n.formatDateTime(typeof params.until === 'string' ? params.until : null),
    };
  });
  protected readonly mayAcknowledge = computed(() => this.session.user()?.role === 'ADMIN');
  protected readonly showInvalidSummary = computed(
    () => this.submitted() && (FIELD_ORDER.some((field) => this.errorFor(field) !== null) || this.form.problems().labels !== undefined || this.form.problems().taints !== undefined),
  );
  protected readonly description = computed(() => {
    const name = this.cluster.cluster()?.name;
    return name ? this.t('add.descriptionOf', { cluster: name }) : this.t('add.description');
  });

  constructor() {
    effect(() => this.cluster.select(this.clusterId()));
  }

  protected errorFor(field: AddNodeField): string | null {
    const serverError = this.store.fieldErrors()[field];
    const sent = this.sent();
    if (serverError && sent) {
      const secret = field === 'password' || field === 'privateKey' || field === 'passphrase';
      // Secrets are cleared after sending, so their error stays until something is typed again.
      const unchanged = secret ? this.secretValue(field) === '' : sent[field] === this.form.snapshot()[field];
      if (unchanged) {
        return serverError;
      }
    }
    const problem = this.form.problems()[field];
    if (!problem || !(this.submitted() || this.visited().has(field))) {
      return null;
    }
    return problem === 'invalid.labels' || problem === 'invalid.taints' ? null : this.t(problem);
  }

  /** The set-wide error of labels or taints: the API's, or a summary when rows have problems. */
  protected setErrorFor(field: 'labels' | 'taints'): string | null {
    const serverError = this.store.fieldErrors()[field];
    const sent = this.sent();
    if (serverError && sent && sent[field] === this.form.snapshot()[field]) {
      return serverError;
    }
    return null;
  }

  protected markVisited(field: AddNodeField): void {
    this.visited.update((visited) => new Set(visited).add(field));
  }

  protected acknowledgeOldCertificates(acknowledged: boolean): void {
    this.form.controls.acknowledgeOldCertificates.setValue(acknowledged);
  }

  protected chooseAuthMethod(method: string): void {
    this.credentials.controls.method.setValue(method === 'PRIVATE_KEY' ? 'PRIVATE_KEY' : ('PASSWORD' satisfies AuthMethod));
  }

  protected refuseKeyFile(file: { readonly name: string }): void {
    this.rejectedFile.set(file.name);
  }

  protected problemTitle(problem: ApiProblem): string {
    return this.errors.titleOf(problem);
  }

  protected problemMessage(problem: ApiProblem): string {
    return this.errors.messageOf(problem);
  }

  protected async addNode(event: Event): Promise<void> {
    event.preventDefault();
    this.submitted.set(true);
    if (!this.form.valid()) {
      this.focusFirstError();
      return;
    }
    const input = this.form.toInput(this.clusterId());
    this.sent.set(this.form.snapshot());
    this.rejectedFile.set(null);
    // Dropped before the answer arrives: the only copy left is in the request being sent.
    this.credentials.forgetSecrets();
    const outcome = await this.store.add(input);
    this.secretCleared.set(!outcome.ok);
    if (outcome.ok) {
      const hostname = outcome.value.hostname;
      this.notifications.show('success', () => this.t('add.done', { hostname }));
      await this.router.navigate(['/clusters', this.clusterId(), 'nodes', outcome.value.id]);
      return;
    }
    this.focusFirstError();
  }

  private secretValue(field: 'password' | 'privateKey' | 'passphrase'): string {
    return field === 'password' ? this.credentials.controls.password.value : field === 'privateKey' ? this.credentials.controls.privateKey.value : this.credentials.controls.passphrase.value;
  }

  private rowErrors(problems: readonly (RowProblem | null)[]): (string | null)[] {
    const show = this.submitted();
    return problems.map((problem) => (problem && (show || problem.problem !== 'required.key') ? this.t(`row.${problem.problem}`, { key: problem.key }) : null));
  }

  private focusFirstError(): void {
    setTimeout(() => {
      const field = FIELD_ORDER.find((name) => this.errorFor(name) !== null || ((name === 'labels' || name === 'taints') && this.form.problems()[name]));
      if (!field) {
        return;
      }
      const text = this.textFields().find((candidate) => candidate.name() === field);
      if (text) {
        text.focus();
        return;
      }
      const file = this.fileFields().find((candidate) => candidate.name() === field);
      if (file) {
        file.focus();
        return;
      }
      this.document.querySelector<HTMLElement>(`[data-field="${field}"] [aria-invalid="true"]`)?.focus();
    });
  }
}

/** The API's refusal to re-add a name removed after it joined, which names the input field that lifts it. */
function asksForAcknowledgement(problem: ApiProblem): boolean {
  return problem.field?.replace(/^input\./, '') === ACKNOWLEDGE_OLD_CERTIFICATES;
}

function fieldKey(field: string): AddNodeField {
  return field.replace(/^input\./, '') as AddNodeField;
}
