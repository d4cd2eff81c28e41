import { computed } from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import { FormControl, FormGroup, type ValidatorFn } from '@angular/forms';
import { domainValidator } from '@ccos/console/ui';
import { checkSshUser } from '@ccos/shared/domain';

export type AuthMethod = 'PASSWORD' | 'PRIVATE_KEY';

/** What the API accepts as a private key (see the API's node credentials); checked here only to answer early. */
const PRIVATE_KEY = /^-----BEGIN (?:OPENSSH |RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY-----[\s\S]+-----END (?:OPENSSH |RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY-----\s*$/;

export type CredentialsField = 'sshUser' | 'password' | 'privateKey' | 'passphrase';
export type CredentialsProblem = 'invalid.sshUser' | 'required.password' | 'required.privateKey' | 'invalid.privateKey';

/** Only the secret of the chosen method is needed; a key must look like one. */
const chosenSecret: ValidatorFn = (group) => {
  const { method, password, privateKey } = group.value as { method: AuthMethod; password: string; privateKey: string };
  if (method === 'PASSWORD') {
    return password === '' ? { 'required.password': true } : null;
  }
  const key = privateKey.trim();
  return !key ? { 'required.privateKey': true } : PRIVATE_KEY.test(key) ? null : { 'invalid.privateKey': true };
};

/**
 * SSH login for a host: a user and either a password or a private key (with an optional
 * passphrase), as an Angular form group whose user check is the domain's checkSshUser. Shared
 * by the add-node form and the update-credentials dialog. The secrets stay in the controls only
 * until {@link forgetSecrets}, which the forms call after every send. Create it in an injection
 * context (a component's field): it follows the group until that context ends.
 */
export class SshCredentialsForm {
  readonly group = new FormGroup(
    {
      sshUser: new FormControl('root', { nonNullable: true, validators: domainValidator((value) => checkSshUser(value.trim()), 'invalid.sshUser') }),
      method: new FormControl<AuthMethod>('PASSWORD', { nonNullable: true }),
      password: new FormControl('', { nonNullable: true }),
      privateKey: new FormControl('', { nonNullable: true }),
      passphrase: new FormControl('', { nonNullable: true }),
    },
    { validators: chosenSecret },
  );
  /** The group's value, so what is computed from its controls (the pages' error texts) follows every change. */
  private readonly value = toSignal(this.group.valueChanges, { initialValue: this.group.value });

  get controls(): SshCredentialsForm['group']['controls'] {
    return this.group.controls;
  }

  readonly method = computed(() => this.value().method ?? this.controls.method.value);

  readonly problems = computed(() => {
    this.value();
    const problems: Partial<Record<CredentialsField, CredentialsProblem>> = {};
    if (this.controls.sshUser.invalid) {
      problems.sshUser = 'invalid.sshUser';
    }
    for (const problem of ['required.password', 'required.privateKey', 'invalid.privateKey'] as const) {
      if (this.group.hasError(problem)) {
        problems[problem === 'required.password' ? 'password' : 'privateKey'] = problem;
      }
    }
    return problems;
  });

  /** Only the chosen kind of secret; the other is sent as null. */
  toInput(): { sshUser: string; password: string | null; privateKey: string | null; passphrase: string | null } {
    const value = this.group.getRawValue();
    const usesKey = value.method === 'PRIVATE_KEY';
    return {
      sshUser: value.sshUser.trim(),
      password: usesKey ? null : value.password,
      privateKey: usesKey ? value.privateKey.trim() : null,
      passphrase: usesKey && value.passphrase ? value.passphrase : null,
    };
  }

  forgetSecrets(): void {
    this.group.patchValue({ password: '', privateKey: '', passphrase: '' });
  }
}
