import { ChangeDetectionStrategy, Component, computed, inject, signal, viewChildren } from '@angular/core';
import { AuthStore, Notifications, Session } from '@ccos/console/data-access';
import { ButtonDirective, PageHeaderComponent, TextFieldComponent } from '@ccos/console/ui';
import { I18n } from '@ccos/console/util-i18n';
import { checkPassword } from '@ccos/shared/domain';
import { accountMessages } from './account.messages';

type PasswordField = 'current' | 'next' | 'confirm';
const FIELDS: readonly PasswordField[] = ['current', 'next', 'confirm'];

/** /account/password: the signed-in user changes their own password (this session stays, the others end). */
@Component({
  selector: 'ccos-change-password-page',
  imports: [ButtonDirective, PageHeaderComponent, TextFieldComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './change-password.page.html',
  styleUrl: './account.pages.css',
})
export class ChangePasswordPage {
  private readonly auth = inject(AuthStore);
  private readonly notifications = inject(Notifications);
  private readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(accountMessages);
  private readonly session = inject(Session);
  protected readonly username = computed(() => this.session.user()?.username ?? '');
  protected readonly saving = this.auth.changingPassword;

  protected readonly current = signal('');
  protected readonly next = signal('');
  protected readonly confirm = signal('');
  protected readonly changed = signal(false);
  private readonly submitted = signal(false);
  /** What was sent, so the API's complaint about a field shows only while it is unchanged. */
  private readonly sent = signal<{ current: string; next: string } | null>(null);
  private readonly fields = viewChildren(TextFieldComponent);

  private readonly clientErrors = computed<Record<PasswordField, string | null>>(() => ({
    current: this.current() ? null : this.t('password.required.current'),
    next: checkPassword(this.next()) !== null ? this.t('password.invalid.new') : this.next() === this.current() ? this.t('password.same') : null,
    confirm: this.confirm() === this.next() ? null : this.t('password.mismatch'),
  }));
  protected readonly showInvalidSummary = computed(() => this.submitted() && FIELDS.some((field) => this.errorFor(field) !== null));

  protected errorFor(field: PasswordField): string | null {
    const sent = this.sent();
    const server = this.auth.passwordFieldErrors();
    // The API's wording names its own fields; the console says it in the user's language.
    if (field === 'current' && server['currentPassword'] && sent?.current === this.current()) {
      return this.t('password.wrongCurrent');
    }
    if (field === 'next' && server['newPassword'] && sent?.next === this.next()) {
      return this.t('password.invalid.new');
    }
    return this.submitted() ? this.clientErrors()[field] : null;
  }

  protected async changePassword(event: Event): Promise<void> {
    event.preventDefault();
    this.submitted.set(true);
    this.changed.set(false);
    if (Object.values(this.clientErrors()).some(Boolean)) {
      this.focusFirstError();
      return;
    }
    this.sent.set({ current: this.current(), next: this.next() });
    const outcome = await this.auth.changePassword(this.current(), this.next());
    if (outcome.ok) {
      this.notifications.show('success', () => this.t('password.changed'));
      this.changed.set(true);
      this.current.set('');
      this.next.set('');
      this.confirm.set('');
      this.submitted.set(false);
      this.sent.set(null);
      return;
    }
    this.focusFirstError();
  }

  private focusFirstError(): void {
    setTimeout(() => {
      const index = FIELDS.findIndex((field) => this.errorFor(field) !== null);
      if (index >= 0) {
        this.fields()[index]?.focus();
      }
    });
  }
}
