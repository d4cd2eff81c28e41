// Angular's forms are partially compiled; without a DOM test bed the JIT compiler links them.
import '@angular/compiler';
import { TestBed } from '@angular/core/testing';
import { describe, expect, it } from 'vitest';
import { AddNodeForm } from './add-node.form';

/** As a page creates it: in an injection context, which its signals follow the controls in. */
function newForm(): AddNodeForm {
  return TestBed.runInInjectionContext(() => new AddNodeForm());
}

const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n';

function filled(): AddNodeForm {
  const form = newForm();
  form.group.patchValue({ hostname: ' worker-3.example.com ', ip: ' 192.168.10.23 ', credentials: { password: 'secret' } });
  return form;
}

describe('the add-node form', () => {
  it('names every field that breaks a domain rule, and follows the controls as they change', () => {
    const form = newForm();
    expect(form.problems()).toEqual({ hostname: 'invalid.hostname', ip: 'invalid.ip', password: 'required.password' });
    form.controls.hostname.setValue('worker-3');
    form.controls.sshPort.setValue('70000');
    form.credentials.controls.sshUser.setValue('root; rm -rf /');
    expect(form.problems()).toEqual({ ip: 'invalid.ip', sshPort: 'invalid.sshPort', sshUser: 'invalid.sshUser', password: 'required.password' });
  });

  it('refuses a port that is not only digits', () => {
    const form = filled();
    form.controls.sshPort.setValue('22a');
    expect(form.problems()).toEqual({ sshPort: 'invalid.sshPort' });
    form.controls.sshPort.setValue(' 2222 ');
    expect(form.problems()).toEqual({});
  });

  it('wants a private key that looks like one when the key method is chosen', () => {
    const form = filled();
    form.credentials.controls.method.setValue('PRIVATE_KEY');
    expect(form.credentials.method()).toBe('PRIVATE_KEY');
    expect(form.problems()).toEqual({ privateKey: 'required.privateKey' });
    form.credentials.controls.privateKey.setValue('ssh-rsa AAAA');
    expect(form.problems()).toEqual({ privateKey: 'invalid.privateKey' });
    form.credentials.controls.privateKey.setValue(KEY);
    expect(form.problems()).toEqual({});
  });

  it('checks label rows with the domain rules and ignores empty rows', () => {
    const form = filled();
    form.controls.labels.setValue([
      { key: 'zone', value: 'a', effect: '' },
      { key: '', value: '', effect: '' },
      { key: 'zone', value: 'b', effect: '' },
    ]);
    expect(form.labelRowProblems()).toEqual([null, null, { problem: 'duplicate.key', key: 'zone' }]);
    expect(form.problems()).toEqual({ labels: 'invalid.labels' });
  });

  it('sends trimmed values and only the chosen secret, then forgets the secrets', () => {
    const form = filled();
    form.controls.taints.setValue([{ key: 'dedicated', value: '', effect: 'NoExecute' }]);
    expect(form.toInput('c1')).toEqual({
      clusterId: 'c1',
      hostname: 'worker-3.example.com',
      ip: '192.168.10.23',
      sshPort: 22,
      sshUser: 'root',
      password: 'secret',
      privateKey: null,
      passphrase: null,
      labels: [],
      taints: [{ key: 'dedicated', value: null, effect: 'NoExecute' }],
    });
    form.credentials.forgetSecrets();
    expect(form.credentials.toInput().password).toBe('');
    expect(form.problems()).toEqual({ password: 'required.password' });
  });

  it('asks to re-add a removed name only once an ADMIN confirmed its old machine is gone', () => {
    const form = filled();
    expect(form.toInput('c1')).not.toHaveProperty('acknowledgeOldCertificates');
    form.controls.acknowledgeOldCertificates.setValue(true);
    expect(form.toInput('c1')).toMatchObject({ hostname: 'worker-3.example.com', acknowledgeOldCertificates: true });
  });
});
