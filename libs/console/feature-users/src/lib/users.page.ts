import { ChangeDetectionStrategy, Component, computed, inject, signal, viewChildren } from '@angular/core';
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
} from '@ccos/console/ui';
import { ROLES, type Role, checkPassword, checkUsername, isRole } from '@ccos/shared/domain';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import { usersMessages } from './users.messages';

type UserField = 'username' | 'password';

/**
 * Users (ADMIN): the list, a form to create one with a role, and per user: change the role,
 * disable or enable, delete (after a confirmation), and their sessions with signing them out.
 * The API refuses what would leave no active admin; its toast says so.
 */
@Component({
  selector: 'ccos-users-page',
  imports: [ButtonDirective, ConfirmDialogComponent, DataStateComponent, PageHeaderComponent, SelectFieldComponent, SessionListComponent, StatusBadgeComponent, TextFieldComponent],
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
