import { FormControl, FormGroup, type ValidatorFn } from '@angular/forms';
import { domainValidator } from '@ccos/console/ui';
import type { BootstrapStyle, RegisterClusterInput } from '@ccos/shared/api-schema';
import { checkApiServerUrl, checkClusterName, checkIp } from '@ccos/shared/domain';

export type CredentialKind = 'KUBECONFIG' | 'TOKEN';

/** The fields the form shows, named as the API names them (so `input.vip` errors land on `vip`). */
export type RegisterField = 'name' | 'apiServerUrl' | 'vip' | 'kubeconfig' | 'token' | 'caCert' | 'machineConfigCaCert' | 'bootstrapStyle' | 'csrAutoApprove' | 'allowInsecureTransport';

/** Which client-side rule a field breaks; the page words it in the current language. */
export type ClientProblem = 'invalid.name' | 'invalid.apiServerUrl' | 'invalid.vip' | 'required.kubeconfig' | 'required.token';

const text = (validator?: ValidatorFn) => new FormControl('', { nonNullable: true, validators: validator ?? [] });
const trimmed = (check: (value: string) => ReturnType<typeof checkIp>, problem: ClientProblem) => domainValidator((value) => check(value.trim()), problem);

/** Only the credential the user chose is needed. */
const chosenCredential: ValidatorFn = (group) => {
  const kind = group.get('credentialKind')?.value as CredentialKind;
  const field = kind === 'TOKEN' ? 'token' : 'kubeconfig';
  return String(group.get(field)?.value ?? '').trim() ? null : { [`required.${field}`]: true };
};

/**
 * The register-cluster form: an Angular form group whose validators are the rules the API
 * applies (from @ccos/shared/domain), each failing under the key the page words, kept apart
 * from the page so the page only wires controls to fields.
 */
export class RegisterClusterForm {
  readonly group = new FormGroup(
    {
      name: text(trimmed(checkClusterName, 'invalid.name')),
      apiServerUrl: text(trimmed(checkApiServerUrl, 'invalid.apiServerUrl')),
      vip: text(trimmed(checkIp, 'invalid.vip')),
      credentialKind: new FormControl<CredentialKind>('KUBECONFIG', { nonNullable: true }),
      kubeconfig: text(),
      token: text(),
      caCert: text(),
      machineConfigCaCert: text(),
      bootstrapStyle: new FormControl<BootstrapStyle>('OPENSHIFT', { nonNullable: true }),
      csrAutoApprove: new FormControl(false, { nonNullable: true }),
      allowInsecureTransport: new FormControl(false, { nonNullable: true }),
    },
    { validators: chosenCredential },
  );

  get controls(): RegisterClusterForm['group']['controls'] {
    return this.group.controls;
  }

  /** Problems per field, in the order the fields appear. */
  problems(): Partial<Record<RegisterField, ClientProblem>> {
    const problems: Partial<Record<RegisterField, ClientProblem>> = {};
    for (const field of ['name', 'apiServerUrl', 'vip'] as const) {
      const errors = this.controls[field].errors;
      if (errors) {
        problems[field] = Object.keys(errors)[0] as ClientProblem;
      }
    }
    for (const field of ['kubeconfig', 'token'] as const) {
      if (this.group.hasError(`required.${field}`)) {
        problems[field] = `required.${field}`;
      }
    }
    return problems;
  }

  valid(): boolean {
    return this.group.valid;
  }

  /** What to send: trimmed, only the chosen kind of credential, empty optional fields left out. */
  toInput(): RegisterClusterInput {
    const value = this.group.getRawValue();
    const optional = (field: string) => (field.trim() ? field.trim() : null);
    const usesToken = value.credentialKind === 'TOKEN';
    return {
      name: value.name.trim(),
      apiServerUrl: value.apiServerUrl.trim(),
      vip: value.vip.trim(),
      kubeconfig: usesToken ? null : value.kubeconfig,
      token: usesToken ? value.token.trim() : null,
      caCert: usesToken ? optional(value.caCert) : null,
      machineConfigCaCert: optional(value.machineConfigCaCert),
      bootstrapStyle: value.bootstrapStyle,
      csrAutoApprove: value.csrAutoApprove,
      allowInsecureTransport: value.allowInsecureTransport,
    };
  }

  /** The value a field had in `input`, to tell whether the user changed it since the API complained. */
  static valueIn(input: RegisterClusterInput, field: RegisterField): unknown {
    return input[field];
  }

  currentValue(field: RegisterField): unknown {
    return this.toInput()[field];
  }
}
