import { ChangeDetectionStrategy, Component, computed, inject, signal, viewChildren } from '@angular/core';
import { ReactiveFormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { ClusterRegistrationStore, ErrorReporter, Notifications } from '@ccos/console/data-access';
import { ButtonDirective, CheckboxFieldComponent, ChoiceFieldComponent, type FieldOption, PageHeaderComponent, SelectFieldComponent, TextFieldComponent } from '@ccos/console/ui';
import { I18n } from '@ccos/console/util-i18n';
import type { BootstrapStyle, RegisterClusterInput } from '@ccos/shared/api-schema';
import { clustersMessages } from '../clusters.messages';
import { type CredentialKind, type RegisterField, RegisterClusterForm } from './register-cluster.form';

/** Fields in the order they appear, for focusing the first invalid one. */
const FIELD_ORDER: readonly RegisterField[] = ['name', 'apiServerUrl', 'vip', 'kubeconfig', 'token', 'caCert', 'bootstrapStyle', 'machineConfigCaCert', 'csrAutoApprove'];

/**
 * Registering a cluster (ADMIN). Rules the console can check run before sending; the API's
 * own field errors (duplicate name, bad kubeconfig …) appear next to the field they name
 * until that field is changed.
 */
@Component({
  selector: 'ccos-register-cluster-page',
  imports: [RouterLink, ButtonDirective, CheckboxFieldComponent, ChoiceFieldComponent, PageHeaderComponent, ReactiveFormsModule, SelectFieldComponent, TextFieldComponent],
  providers: [ClusterRegistrationStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './register-cluster.page.html',
  styleUrl: './register-cluster.page.css',
})
export class RegisterClusterPage {
  private readonly router = inject(Router);
  private readonly notifications = inject(Notifications);
  private readonly errors = inject(ErrorReporter);
  protected readonly store = inject(ClusterRegistrationStore);
  protected readonly t = inject(I18n).translator(clustersMessages);
  protected readonly form = new RegisterClusterForm();

  /** Client-side problems show once the user tried to submit or left the field. */
  private readonly submitted = signal(false);
  private readonly visited = signal<ReadonlySet<RegisterField>>(new Set());
  /** What was last sent, so an API field error disappears as soon as that field is edited. */
  private readonly sent = signal<RegisterClusterInput | null>(null);
  private readonly fields = viewChildren(TextFieldComponent);

  protected readonly credentialKinds = computed<readonly FieldOption[]>(() => [
    { value: 'KUBECONFIG', label: this.t('credential.KUBECONFIG') },
    { value: 'TOKEN', label: this.t('credential.TOKEN') },
  ]);
  protected readonly bootstrapStyles = computed<readonly FieldOption[]>(() => [
    { value: 'OPENSHIFT', label: this.t('bootstrap.OPENSHIFT') },
    { value: 'KUBEADM', label: this.t('bootstrap.KUBEADM') },
  ]);
  /**
   * API problems naming a field this form does not show, listed above the buttons.
   * (Problems naming no field are toasts, shown by the error link.)
   */
  protected readonly formProblems = computed(() => this.store.problems().filter((problem) => problem.field !== null && !FIELD_ORDER.includes(fieldKey(problem.field))));
  /** Said once at the bottom, by the submit button, when any field shows a problem. */
  protected showInvalidSummary(): boolean {
    return this.submitted() && FIELD_ORDER.some((field) => this.errorFor(field) !== null);
  }

  protected errorFor(field: RegisterField): string | null {
    const sent = this.sent();
    const serverError = this.store.fieldErrors()[field];
    if (serverError && sent && RegisterClusterForm.valueIn(sent, field) === this.form.currentValue(field)) {
      return serverError;
    }
    const problem = this.form.problems()[field];
    return problem && (this.submitted() || this.visited().has(field)) ? this.t(problem) : null;
  }

  protected markVisited(field: RegisterField): void {
    this.visited.update((visited) => new Set(visited).add(field));
  }

  protected problemTitle(code: Parameters<ErrorReporter['titleOf']>[0]): string {
    return this.errors.titleOf(code);
  }

  protected problemMessage(problem: Parameters<ErrorReporter['messageOf']>[0]): string {
    return this.errors.messageOf(problem);
  }

  protected chooseCredentialKind(kind: string): void {
    this.form.controls.credentialKind.setValue(kind === 'TOKEN' ? 'TOKEN' : ('KUBECONFIG' satisfies CredentialKind));
  }

  protected chooseBootstrapStyle(style: string): void {
    this.form.controls.bootstrapStyle.setValue(style === 'KUBEADM' ? 'KUBEADM' : ('OPENSHIFT' satisfies BootstrapStyle));
  }

  protected async registerCluster(event: Event): Promise<void> {
    event.preventDefault();
    this.submitted.set(true);
    if (!this.form.valid()) {
      this.focusFirstError();
      return;
    }
    const input = this.form.toInput();
    this.sent.set(input);
    const outcome = await this.store.register(input);
    if (outcome.ok) {
      const name = outcome.value.name;
      this.notifications.show('success', () => this.t('register.done', { name }));
      await this.router.navigate(['/clusters', outcome.value.id]);
      return;
    }
    this.focusFirstError();
  }

  private focusFirstError(): void {
    // Wait for the error texts to render, then focus the first field that has one.
    setTimeout(() => {
      const field = FIELD_ORDER.find((name) => this.errorFor(name) !== null);
      const component = field ? this.fields().find((candidate) => candidate.name() === field) : undefined;
      component?.focus();
    });
  }
}

function fieldKey(field: string): RegisterField {
  return field.replace(/^input\./, '') as RegisterField;
}
