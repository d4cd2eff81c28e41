import { type Signal, computed, signal } from '@angular/core';
import type { BootstrapStyle, RegisterClusterInput } from '@ccos/shared/api-schema';
import { checkApiServerUrl, checkClusterName, checkIp } from '@ccos/shared/domain';

export type CredentialKind = 'KUBECONFIG' | 'TOKEN';

/** The fields the form shows, named as the API names them (so `input.vip` errors land on `vip`). */
export type RegisterField = 'name' | 'apiServerUrl' | 'vip' | 'kubeconfig' | 'token' | 'caCert' | 'machineConfigCaCert' | 'bootstrapStyle' | 'csrAutoApprove' | 'allowInsecureTransport';

/** Which client-side rule a field breaks; the page words it in the current language. */
export type ClientProblem = 'invalid.name' | 'invalid.apiServerUrl' | 'invalid.vip' | 'required.kubeconfig' | 'required.token';

/**
 * The register-cluster form's values and client-side rules (the same rules the API applies,
 * from @ccos/shared/domain), kept apart from the page so the page only wires them to fields.
 */
export class RegisterClusterForm {
  readonly name = signal('');
  readonly apiServerUrl = signal('');
  readonly vip = signal('');
  readonly credentialKind = signal<CredentialKind>('KUBECONFIG');
  readonly kubeconfig = signal('');
  readonly token = signal('');
  readonly caCert = signal('');
  readonly machineConfigCaCert = signal('');
  readonly bootstrapStyle = signal<BootstrapStyle>('OPENSHIFT');
  readonly csrAutoApprove = signal(false);
  readonly allowInsecureTransport = signal(false);

  /** Problems per field, in the order the fields appear. */
  readonly problems: Signal<Partial<Record<RegisterField, ClientProblem>>> = computed(() => {
    const problems: Partial<Record<RegisterField, ClientProblem>> = {};
    if (checkClusterName(this.name().trim()) !== null) {
      problems.name = 'invalid.name';
    }
    if (checkApiServerUrl(this.apiServerUrl().trim()) !== null) {
      problems.apiServerUrl = 'invalid.apiServerUrl';
    }
    if (checkIp(this.vip().trim()) !== null) {
      problems.vip = 'invalid.vip';
    }
    if (this.credentialKind() === 'KUBECONFIG' && !this.kubeconfig().trim()) {
      problems.kubeconfig = 'required.kubeconfig';
    }
    if (this.credentialKind() === 'TOKEN' && !this.token().trim()) {
      problems.token = 'required.token';
    }
    return problems;
  });

  readonly valid = computed(() => Object.keys(this.problems()).length === 0);

  /** What to send: trimmed, only the chosen kind of credential, empty optional fields left out. */
  toInput(): RegisterClusterInput {
    const optional = (value: string) => (value.trim() ? value.trim() : null);
    const usesToken = this.credentialKind() === 'TOKEN';
    return {
      name: this.name().trim(),
      apiServerUrl: this.apiServerUrl().trim(),
      vip: this.vip().trim(),
      kubeconfig: usesToken ? null : this.kubeconfig(),
      token: usesToken ? this.token().trim() : null,
      caCert: usesToken ? optional(this.caCert()) : null,
      machineConfigCaCert: optional(this.machineConfigCaCert()),
      bootstrapStyle: this.bootstrapStyle(),
      csrAutoApprove: this.csrAutoApprove(),
      allowInsecureTransport: this.allowInsecureTransport(),
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
