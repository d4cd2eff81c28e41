import { ChangeDetectionStrategy, Component, computed, inject, signal, viewChildren } from '@angular/core';
import { ErrorReporter, Notifications, UsersStore } from '@ccos/console/data-access';
import { ButtonDirective, DataStateComponent, type FieldOption, PageHeaderComponent, SelectFieldComponent, StatusBadgeComponent, type StatusTone, TextFieldComponent } from '@ccos/console/ui';
import { ROLES, type Role, checkPassword, checkUsername, isRole } from '@ccos/shared/domain';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import { usersMessages } from './users.messages';

type UserField = 'username' | 'password';

const ROLE_TONES: Record<Role, StatusTone> = { ADMIN: 'info', OPERATOR: 'ok', VIEWER: 'neutral' };

/** Users (ADMIN): the list, and a form to create one with a role. */
@Component({
  selector: 'ccos-users-page',
  imports: [ButtonDirective, DataStateComponent, PageHeaderComponent, SelectFieldComponent, StatusBadgeComponent, TextFieldComponent],
  providers: [UsersStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './users.page.html',
  styleUrl: './users.page.css',
})
export class UsersPage {
  private readonly notifications = inject(Notifications);
  private readonly errors = inject(ErrorReporter);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(usersMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(UsersStore);

  protected readonly formOpen = signal(false);
  protected readonly username = signal('');
  protected readonly password = signal('');
  protected readonly role = signal<Role>('VIEWER');
  private readonly submitted = signal(false);
  private readonly sent = signal<{ username: string; password: string } | null>(null);
  private readonly fields = viewChildren(TextFieldComponent);

  protected readonly roleOptions = computed<readonly FieldOption[]>(() => ROLES.map((role) => ({ value: role, label: this.roleLabel(role) })));
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  private readonly clientErrors = computed(() => ({
    username: checkUsername(this.username().trim()) === null ? null : this.t('invalid.username'),
    password: checkPassword(this.password()) === null ? null : this.t('invalid.password'),
  }));
  private readonly clientInvalid = computed(() => Object.values(this.clientErrors()).some(Boolean));
  /** Said once, by the submit button, when any field shows a problem (the console's or the API's). */
  protected readonly showInvalidSummary = computed(() => this.submitted() && (['username', 'password'] as const).some((field) => this.errorFor(field) !== null));

  protected roleLabel(role: Role): string {
    return this.common(`role.${role}`);
  }

  protected roleHint(role: Role): string {
    return this.t(`role.hint.${role}`);
  }

  protected roleTone(role: Role): StatusTone {
    return ROLE_TONES[role];
  }

  protected errorFor(field: UserField): string | null {
    const serverError = this.store.fieldErrors()[field];
    const current = field === 'username' ? this.username().trim() : this.password();
    if (serverError && this.sent()?.[field] === current) {
      return serverError;
    }
    return this.submitted() ? this.clientErrors()[field] : null;
  }

  protected openForm(): void {
    this.formOpen.set(true);
    setTimeout(() => this.fields()[0]?.focus());
  }

  protected closeForm(): void {
    this.formOpen.set(false);
    this.resetForm();
  }

  protected chooseRole(value: string): void {
    if (isRole(value)) {
      this.role.set(value);
    }
  }

  protected async createUser(event: Event): Promise<void> {
    event.preventDefault();
    this.submitted.set(true);
    if (this.clientInvalid()) {
      this.focusFirstError();
      return;
    }
    const input = { username: this.username().trim(), password: this.password(), role: this.role() };
    this.sent.set({ username: input.username, password: input.password });
    const outcome = await this.store.create(input);
    if (outcome.ok) {
      const username = outcome.value.username;
      this.notifications.show('success', () => this.t('created', { username }));
      this.formOpen.set(false);
      this.resetForm();
      return;
    }
    this.focusFirstError();
  }

  private resetForm(): void {
    this.username.set('');
    this.password.set('');
    this.role.set('VIEWER');
    this.submitted.set(false);
    this.sent.set(null);
    this.store.clearProblems();
  }

  private focusFirstError(): void {
    setTimeout(() => {
      const index = (['username', 'password'] as const).findIndex((field) => this.errorFor(field) !== null);
      if (index >= 0) {
        this.fields()[index]?.focus();
      }
    });
  }
}
