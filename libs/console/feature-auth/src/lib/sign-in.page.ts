import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal, untracked, viewChildren } from '@angular/core';
import { NonNullableFormBuilder, ReactiveFormsModule, Validators } from '@angular/forms';
import { Router } from '@angular/router';
import { type ApiProblem, AuthStore, ErrorReporter, Session, safeReturnUrl } from '@ccos/console/data-access';
import { ButtonDirective, LanguageSwitchComponent, TextFieldComponent, requiredText } from '@ccos/console/ui';
import { I18n, LANGUAGES, LANGUAGE_NAMES, commonMessages, isLanguage } from '@ccos/console/util-i18n';
import { authMessages } from './auth.messages';

/** The sign-in page; afterwards the user goes back to where they were sent from. */
@Component({
  selector: 'ccos-sign-in-page',
  imports: [ButtonDirective, LanguageSwitchComponent, ReactiveFormsModule, TextFieldComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './sign-in.page.html',
  styleUrl: './sign-in.page.css',
})
export class SignInPage {
  /** From the query string (`?returnUrl=/clusters/…`). */
  readonly returnUrl = input<string | undefined>(undefined);

  private readonly auth = inject(AuthStore);
  private readonly session = inject(Session);
  private readonly router = inject(Router);
  private readonly errors = inject(ErrorReporter);
  private readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(authMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly language = this.i18n.language;
  protected readonly languages = LANGUAGES.map((code) => ({ code, name: LANGUAGE_NAMES[code], tag: code === 'zh' ? 'zh-CN' : 'en' }));

  protected readonly form = inject(NonNullableFormBuilder).group({
    username: ['', requiredText],
    password: ['', Validators.required],
  });
  protected readonly submitted = signal(false);
  protected readonly busy = this.auth.busy;
  protected readonly problem = signal<ApiProblem | null>(null);
  protected readonly sessionExpired = computed(() => this.session.signedOutReason() === 'expired' && !this.problem());

  /** Field errors show once the user tried to sign in; the template asks again as they type. */
  protected usernameError(): string | null {
    return this.submitted() && this.form.controls.username.invalid ? this.t('required.username') : null;
  }

  protected passwordError(): string | null {
    return this.submitted() && this.form.controls.password.invalid ? this.t('required.password') : null;
  }
  protected readonly problemMessage = computed(() => {
    const problem = this.problem();
    return problem ? this.errors.messageOf(problem) : '';
  });
  private readonly fields = viewChildren(TextFieldComponent);
  private signingInHere = false;

  constructor() {
    // Signed in in another tab of this browser: this one follows.
    effect(() => {
      if (this.session.signedIn() && !this.signingInHere) {
        void this.router.navigateByUrl(safeReturnUrl(untracked(this.returnUrl)));
      }
    });
  }

  protected async signIn(event: Event): Promise<void> {
    event.preventDefault();
    this.submitted.set(true);
    this.problem.set(null);
    if (this.form.invalid) {
      this.fields()[this.form.controls.username.invalid ? 0 : 1]?.focus();
      return;
    }
    this.signingInHere = true;
    const { username, password } = this.form.getRawValue();
    const outcome = await this.auth.signIn(username.trim(), password);
    if (outcome.ok) {
      await this.router.navigateByUrl(safeReturnUrl(this.returnUrl()));
      return;
    }
    this.signingInHere = false;
    this.problem.set(outcome.problems[0] ?? null);
    this.form.controls.password.setValue('');
    this.fields()[1]?.focus();
  }

  protected switchLanguage(code: string): void {
    if (isLanguage(code)) {
      this.i18n.setLanguage(code);
    }
  }
}
