import { ChangeDetectionStrategy, Component, booleanAttribute, computed, effect, inject, input, output, signal } from '@angular/core';
import { ReactiveFormsModule } from '@angular/forms';
import { ChoiceFieldComponent, ConfirmDialogComponent, type FieldOption, FileTextFieldComponent, TextFieldComponent } from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import type { SshCredentialsInput } from '@ccos/shared/api-schema';
import { nodesMessages } from '../nodes.messages';
import { type AuthMethod, type CredentialsField, SshCredentialsForm } from '../ssh-credentials.form';

/**
 * New SSH credentials for a node, in a dialog. It hands the input to the page and drops
 * the password or key at once; the API's field errors come back through `fieldErrors`.
 */
@Component({
  selector: 'ccos-credentials-dialog',
  imports: [ChoiceFieldComponent, ConfirmDialogComponent, FileTextFieldComponent, ReactiveFormsModule, TextFieldComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    .fields { display: flex; flex-direction: column; gap: 0.9rem; }
  `,
  template: `
    <ccos-confirm-dialog
      [open]="open()"
      [heading]="t('credentials.title', { hostname: hostname() })"
      [confirmLabel]="t('credentials.submit')"
      [cancelLabel]="common('cancel')"
      [busy]="busy()"
      (confirmed)="submit()"
      (cancelled)="close()"
    >
      <div class="fields">
        <p>{{ t('credentials.what') }}</p>
        @if (cleared()) {
          <p class="ccos-alert ccos-alert--info" role="status">{{ t('auth.cleared') }}</p>
        }
        <ccos-text-field name="sshUser" required monospace autocomplete="off" [label]="t('field.sshUser')" [formControl]="form.controls.sshUser" [error]="errorFor('sshUser')" />
        <ccos-choice-field [legend]="t('auth.legend')" [options]="methods()" [value]="form.method()" (valueChange)="chooseMethod($event)" />
        @if (form.method() === 'PASSWORD') {
          <ccos-text-field name="password" type="password" required autocomplete="new-password" [label]="t('field.password')" [formControl]="form.controls.password" [error]="errorFor('password')" />
        } @else {
          <ccos-file-text-field
            name="privateKey"
            required
            [rows]="5"
            [maxBytes]="32768"
            [label]="t('field.privateKey')"
            [chooseLabel]="t('auth.chooseFile')"
            placeholder="-----BEGIN OPENSSH PRIVATE KEY-----"
            [formControl]="form.controls.privateKey"
            [error]="errorFor('privateKey')"
            (fileRejected)="tooLarge.set($event.name)"
          />
          <ccos-text-field name="passphrase" type="password" autocomplete="new-password" [label]="t('field.passphrase')" [formControl]="form.controls.passphrase" [error]="errorFor('passphrase')" />
        }
      </div>
    </ccos-confirm-dialog>
  `,
})
export class CredentialsDialogComponent {
  readonly open = input.required<boolean>();
  readonly hostname = input.required<string>();
  readonly sshUser = input<string | null>(null);
  readonly busy = input(false, { transform: booleanAttribute });
  /** The API's problems by field (`password`, `privateKey`, `sshUser` …) for what was last sent. */
  readonly fieldErrors = input<Readonly<Partial<Record<string, string>>>>({});
  readonly submitted = output<SshCredentialsInput>();
  readonly cancelled = output();

  private readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(nodesMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly form = new SshCredentialsForm();
  private readonly tried = signal(false);
  protected readonly cleared = signal(false);
  protected readonly tooLarge = signal<string | null>(null);
  private sentUser: string | null = null;

  protected readonly methods = computed<readonly FieldOption[]>(() => [
    { value: 'PASSWORD', label: this.t('auth.PASSWORD') },
    { value: 'PRIVATE_KEY', label: this.t('auth.PRIVATE_KEY') },
  ]);

  constructor() {
    // Each opening starts clean, with the node's current user.
    effect(() => {
      if (this.open()) {
        this.form.controls.sshUser.setValue(this.sshUser() ?? 'root');
        this.form.controls.method.setValue('PASSWORD');
        this.form.forgetSecrets();
        this.tried.set(false);
        this.cleared.set(false);
        this.tooLarge.set(null);
        this.sentUser = null;
      }
    });
  }

  protected errorFor(field: CredentialsField): string | null {
    if (field === 'privateKey' && this.tooLarge()) {
      return this.t('auth.fileTooLarge', { name: this.tooLarge() ?? '' });
    }
    const server = this.fieldErrors()[field];
    if (server && (field === 'sshUser' ? this.form.controls.sshUser.value.trim() === this.sentUser : this.secretOf(field) === '')) {
      return server;
    }
    const problem = this.form.problems()[field];
    return problem && this.tried() ? this.t(problem) : null;
  }

  protected chooseMethod(method: string): void {
    this.form.controls.method.setValue(method === 'PRIVATE_KEY' ? 'PRIVATE_KEY' : ('PASSWORD' satisfies AuthMethod));
  }

  protected submit(): void {
    this.tried.set(true);
    if (Object.keys(this.form.problems()).length > 0) {
      return;
    }
    const input = this.form.toInput();
    this.sentUser = input.sshUser;
    this.form.forgetSecrets();
    this.cleared.set(true);
    this.submitted.emit(input);
  }

  protected close(): void {
    this.form.forgetSecrets();
    this.cancelled.emit();
  }

  private secretOf(field: CredentialsField): string {
    return field === 'password' ? this.form.controls.password.value : field === 'privateKey' ? this.form.controls.privateKey.value : this.form.controls.passphrase.value;
  }
}
