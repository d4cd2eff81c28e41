// Angular's forms are partially compiled; without a DOM test bed the JIT compiler links them.
import '@angular/compiler';
import { describe, expect, it } from 'vitest';
import { RegisterClusterForm } from './register-cluster.form';

function filled(): RegisterClusterForm {
  const form = new RegisterClusterForm();
  form.group.patchValue({ name: ' prod-east ', apiServerUrl: ' https://api.prod.example.com:6443 ', vip: ' 192.168.10.5 ', kubeconfig: 'apiVersion: v1\n' });
  return form;
}

describe('the register-cluster form', () => {
  it('names every empty required field with the rule it breaks', () => {
    const form = new RegisterClusterForm();
    expect(form.valid()).toBe(false);
    expect(form.problems()).toEqual({ name: 'invalid.name', apiServerUrl: 'invalid.apiServerUrl', vip: 'invalid.vip', kubeconfig: 'required.kubeconfig' });
  });

  it('applies the domain checks to the trimmed values', () => {
    const form = filled();
    expect(form.problems()).toEqual({});
    form.controls.vip.setValue('192.168.10.300');
    form.controls.apiServerUrl.setValue('ftp://api');
    expect(form.problems()).toEqual({ apiServerUrl: 'invalid.apiServerUrl', vip: 'invalid.vip' });
  });

  it('needs only the credential the user chose', () => {
    const form = filled();
    form.controls.credentialKind.setValue('TOKEN');
    expect(form.problems()).toEqual({ token: 'required.token' });
    form.controls.token.setValue(' sha256~abc ');
    expect(form.valid()).toBe(true);
  });

  it('sends trimmed values and only the chosen credential', () => {
    const form = filled();
    form.controls.caCert.setValue('ignored while a kubeconfig is used');
    expect(form.toInput()).toEqual({
      name: 'prod-east',
      apiServerUrl: 'https://api.prod.example.com:6443',
      vip: '192.168.10.5',
      kubeconfig: 'apiVersion: v1\n',
      token: null,
      caCert: null,
      machineConfigCaCert: null,
      bootstrapStyle: 'OPENSHIFT',
      csrAutoApprove: false,
      allowInsecureTransport: false,
    });
    form.controls.credentialKind.setValue('TOKEN');
    form.controls.token.setValue(' sha256~abc ');
    expect(form.toInput()).toMatchObject({ kubeconfig: null, token: 'sha256~abc', caCert: 'ignored while a kubeconfig is used' });
  });
});
