import { computed, signal } from '@angular/core';
import { checkSshUser } from '@ccos/shared/domain';

export type AuthMethod = 'PASSWORD' | 'PRIVATE_KEY';

/** What the API accepts as a private key (see the API's node credentials); checked here only to answer early. */
const PRIVATE_KEY = /^-----BEGIN (?:OPENSSH |RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY-----[\s\S]+-----END (?:OPENSSH |RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY-----\s*$/;

export type CredentialsField = 'sshUser' | 'password' | 'privateKey' | 'passphrase';
export type CredentialsProblem = 'invalid.sshUser' | 'required.password' | 'required.privateKey' | 'invalid.privateKey';

/**
 * SSH login for a host: a user and either a password or a private key (with an optional
 * passphrase). Shared by the add-node form and the update-credentials dialog. The secrets
 * live in signals only until {@link forgetSecrets}, which the forms call after every send.
 */
export class SshCredentialsForm {
  readonly sshUser = signal('root');
  readonly method = signal<AuthMethod>('PASSWORD');
  readonly password = signal('');
  readonly privateKey = signal('');
  readonly passphrase = signal('');

  readonly problems = computed(() => {
    const problems: Partial<Record<CredentialsField, CredentialsProblem>> = {};
    if (checkSshUser(this.sshUser().trim()) !== null) {
      problems.sshUser = 'invalid.sshUser';
    }
    if (this.method() === 'PASSWORD' && this.password() === '') {
      problems.password = 'required.password';
    }
    if (this.method() === 'PRIVATE_KEY') {
      const key = this.privateKey().trim();
      if (!key) {
        problems.privateKey = 'required.privateKey';
      } else if (!PRIVATE_KEY.test(key)) {
        problems.privateKey = 'invalid.privateKey';
      }
    }
    return problems;
  });

  /** Only the chosen kind of secret; the other is sent as null. */
  toInput(): { sshUser: string; password: string | null; privateKey: string | null; passphrase: string | null } {
    const usesKey = this.method() === 'PRIVATE_KEY';
    return {
      sshUser: this.sshUser().trim(),
      password: usesKey ? null : this.password(),
      privateKey: usesKey ? this.privateKey().trim() : null,
      passphrase: usesKey && this.passphrase() ? this.passphrase() : null,
    };
  }

  forgetSecrets(): void {
    this.password.set('');
    this.privateKey.set('');
    this.passphrase.set('');
  }
}
