import { ChangeDetectionStrategy, Component, computed, inject, signal, viewChildren } from '@angular/core';
import { NonNullableFormBuilder, ReactiveFormsModule, Validators } from '@angular/forms';
import { AuthStore, Notifications, Session } from '@ccos/console/data-access';
import { ButtonDirective, PageHeaderComponent, TextFieldComponent, differentFrom, domainValidator, firstWithError, sameAs } from '@ccos/console/ui';
import { I18n } from '@ccos/console/util-i18n';
import { checkPassword } from '@ccos/shared/domain';
import { accountMessages } from './account.messages';

type PasswordField = 'current' | 'next' | 'confirm';
const FIELDS: readonly PasswordField[] = ['current', 'next', 'confirm'];

/** /account/password: the signed-in user changes their own password (this session stays, the others end). */
@Component({
  selector: 'ccos-change-password-page',
  imports: [ButtonDirective, PageHeaderComponent, ReactiveFormsModule, TextFieldComponent],
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

  protected readonly form = inject(NonNullableFormBuilder).group(
    {
      current: ['', Validators.required],
      next: ['', domainValidator(checkPassword)],
      confirm: [''],
    },
    { validators: [differentFrom('next', 'current'), sameAs('confirm', 'next')] },
  );
  protected readonly changed = signal(false);
  private readonly submitted = signal(false);
  /** What was sent, so the API's complaint about a field shows only while it is unchanged. */
  private readonly sent = signal<{ current: string; next: string } | null>(null);
  private readonly fields = viewChildren(TextFieldComponent);

  private clientError(field: PasswordField): string | null {
    const { controls } = this.form;
    switch (field) {
      case 'current':
        return controls.current.invalid ? this.t('password.required.current') : null;
      case 'next':
        return controls.next.invalid ? this.t('password.invalid.new') : this.form.hasError('same') ? this.t('password.same') : null;
      case 'confirm':
        return this.form.hasError('mismatch') ? this.t('password.mismatch') : null;
    }
  }

  protected showInvalidSummary(): boolean {
    return this.submitted() && FIELDS.some((field) => this.errorFor(field) !== null);
  }

  protected errorFor(field: PasswordField): string | null {
    const sent = this.sent();
    const server = this.auth.passwordFieldErrors();
    // The API's wording names its own fields; the console says it in the user's language.
    const { current, next } = this.form.getRawValue();
    if (field === 'current' && server['currentPassword'] && sent?.current === current) {
      return this.t('password.wrongCurrent');
    }
    if (field === 'next' && server['newPassword'] && sent?.next === next) {
      return this.t('password.invalid.new');
    }
    return this.submitted() ? this.clientError(field) : null;
  }

  protected async changePassword(event: Event): Promise<void> {
    event.preventDefault();
    this.submitted.set(true);
    this.changed.set(false);
    if (this.form.invalid) {
      this.focusFirstError();
      return;
    }
    const { current, next } = this.form.getRawValue();
    this.sent.set({ current, next });
    const outcome = await this.auth.changePassword(current, next);
    if (outcome.ok) {
      this.notifications.show('success', () => this.t('password.changed'));
      this.changed.set(true);
      this.form.reset();
      this.submitted.set(false);
      this.sent.set(null);
      return;
    }
    this.focusFirstError();
  }

  private focusFirstError(): void {
    setTimeout(() => {
      const index = firstWithError(FIELDS, (field) => this.errorFor(field));
      if (index >= 0) {
        this.fields()[index]?.focus();
      }
    });
  }
}
