import { ChangeDetectionStrategy, Component, computed, inject, signal, viewChildren } from '@angular/core';
import { NonNullableFormBuilder, ReactiveFormsModule } from '@angular/forms';
import { ErrorReporter, Notifications, Session, type User, UsersStore, userAgentSummary } from '@ccos/console/data-access';
import {
  ButtonDirective,
  ConfirmDialogComponent,
  DataStateComponent,
  type FieldOption,
  PageHeaderComponent,
  SelectFieldComponent,
  SessionListComponent,
  type SessionListLabels,
  type SessionRow,
  StatusBadgeComponent,
  TextFieldComponent,
  domainValidator,
  firstWithError,
} from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import { ROLES, type Role, checkPassword, checkUsername, isRole } from '@ccos/shared/domain';
import { usersMessages } from './users.messages';

type UserField = 'username' | 'password';
const USER_FIELDS: readonly UserField[] = ['username', 'password'];

/**
 * Users (ADMIN): the list, a form to create one with a role, and per user: change the role,
 * disable or enable, delete (after a confirmation), and their sessions with signing them out.
 * The API refuses what would leave no active admin; its toast says so.
 */
@Component({
  selector: 'ccos-users-page',
  imports: [ButtonDirective, ConfirmDialogComponent, DataStateComponent, PageHeaderComponent, ReactiveFormsModule, SelectFieldComponent, SessionListComponent, StatusBadgeComponent, TextFieldComponent],
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
  private readonly session = inject(Session);
  protected readonly myId = computed(() => this.session.user()?.id ?? null);
  /** The user waiting for the delete confirmation. */
  protected readonly deleting = signal<string | null>(null);

  protected readonly formOpen = signal(false);
  /** The new user; the domain's own checks decide what a user name and a password may be. */
  protected readonly form = inject(NonNullableFormBuilder).group({
    username: ['', domainValidator((value) => checkUsername(value.trim()))],
    password: ['', domainValidator(checkPassword)],
    role: ['VIEWER' as Role],
  });
  private readonly submitted = signal(false);
  private readonly sent = signal<{ username: string; password: string } | null>(null);
  private readonly fields = viewChildren(TextFieldComponent);

  protected readonly roleOptions = computed<readonly FieldOption[]>(() => ROLES.map((role) => ({ value: role, label: this.roleLabel(role) })));
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  /** Said once, by the submit button, when any field shows a problem (the console's or the API's). */
  protected showInvalidSummary(): boolean {
    return this.submitted() && USER_FIELDS.some((field) => this.errorFor(field) !== null);
  }

  protected readonly sessionRows = computed<readonly SessionRow[]>(() =>
    this.store.sessions().map((session) => ({
      id: session.id,
      client: userAgentSummary(session.userAgent) || this.t('list.unknownClient'),
      address: session.sourceAddress,
      signedIn: this.i18n.formatDateTime(session.createdAt),
      lastUsed: this.i18n.formatDateTime(session.lastUsedAt),
      current: session.current,
    })),
  );
  protected readonly sessionLabels = computed<SessionListLabels>(() => ({
    caption: this.t('list.caption'),
    client: this.t('list.client'),
    address: this.t('list.address'),
    signedIn: this.t('list.signedIn'),
    lastUsed: this.t('list.lastUsed'),
    actions: this.t('list.actions'),
    current: this.t('list.current'),
    signOut: this.t('list.signOut'),
    signOutRow: (row) => this.t('list.signOutRow', { client: row.client, address: row.address }),
  }));
  protected readonly sessionsProblem = computed(() => {
    const problem = this.store.sessionsProblems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  protected async changeRole(user: User, event: Event): Promise<void> {
    const select = event.target as HTMLSelectElement;
    const role = select.value;
    if (!isRole(role) || role === user.role) {
      return;
    }
    const outcome = await this.store.setRole(user.username, role);
    if (outcome.ok) {
      const { username } = outcome.value;
      this.notifications.show('success', () => this.t('roleChanged', { username, role: this.roleLabel(role) }));
    } else {
      // Refused (the toast says why): the select shows the role the user still has.
      select.value = user.role;
    }
  }

  protected async disable(username: string): Promise<void> {
    if ((await this.store.disable(username)).ok) {
      this.notifications.show('success', () => this.t('disabledUser', { username }));
    }
  }

  protected async enable(username: string): Promise<void> {
    if ((await this.store.enable(username)).ok) {
      this.notifications.show('success', () => this.t('enabledUser', { username }));
    }
  }

  protected async deleteUser(): Promise<void> {
    const username = this.deleting();
    if (!username) {
      return;
    }
    const outcome = await this.store.delete(username);
    this.deleting.set(null);
    if (outcome.ok) {
      this.notifications.show('success', () => this.t('deletedUser', { username }));
    }
  }

  protected toggleSessions(username: string): void {
    this.store.showSessions(this.store.sessionsOf() === username ? null : username);
  }

  protected async signOutSession(username: string, id: string): Promise<void> {
    const client = this.sessionRows().find((row) => row.id === id)?.client ?? '';
    if ((await this.store.revokeSession(id)).ok) {
      this.notifications.show('success', () => this.t('sessions.signedOutOne', { client, username }));
    }
  }

  protected async signOutEverywhere(username: string): Promise<void> {
    if ((await this.store.revokeAllSessions(username)).ok) {
      this.notifications.show('success', () => this.t('sessions.signedOutAll', { username }));
    }
  }

  protected roleLabel(role: Role): string {
    return this.common(`role.${role}`);
  }

  protected roleHint(role: Role): string {
    return this.t(`role.hint.${role}`);
  }

  protected errorFor(field: UserField): string | null {
    const serverError = this.store.fieldErrors()[field];
    const { username, password } = this.form.getRawValue();
    const current = field === 'username' ? username.trim() : password;
    if (serverError && this.sent()?.[field] === current) {
      return serverError;
    }
    return this.submitted() && this.form.controls[field].invalid ? this.t(field === 'username' ? 'invalid.username' : 'invalid.password') : null;
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
      this.form.controls.role.setValue(value);
    }
  }

  protected async createUser(event: Event): Promise<void> {
    event.preventDefault();
    this.submitted.set(true);
    if (this.form.invalid) {
      this.focusFirstError();
      return;
    }
    const { username, password, role } = this.form.getRawValue();
    const input = { username: username.trim(), password, role };
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
    this.form.reset();
    this.submitted.set(false);
    this.sent.set(null);
    this.store.clearProblems();
  }

  private focusFirstError(): void {
    setTimeout(() => {
      const index = firstWithError(USER_FIELDS, (field) => this.errorFor(field));
      if (index >= 0) {
        this.fields()[index]?.focus();
      }
    });
  }
}
