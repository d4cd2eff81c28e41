import { describe, expect, it } from 'vitest';
import { redactSecrets, targetOf } from './audit-middleware';

describe('audit entries', () => {
  it('replaces every secret argument, however deep, and keeps the rest', () => {
    const args = {
      nodeId: 'n1',
      input: { hostname: 'worker-1', password: 'hunter2-long', privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----', passphrase: 'pp', labels: [{ key: 'a', value: 'b' }] },
      clusters: [{ kubeconfig: 'apiVersion: v1', token: 'sa-token', caCert: 'PEM' }],
      newPassword: 'n3w-password',
    };
    const redacted = redactSecrets(args);
    expect(redacted).toEqual({
      nodeId: 'n1',
      input: { hostname: 'worker-1', password: '[redacted]', privateKey: '[redacted]', passphrase: '[redacted]', labels: [{ key: 'a', value: 'b' }] },
      clusters: [{ kubeconfig: '[redacted]', token: '[redacted]', caCert: '[redacted]' }],
      newPassword: '[redacted]',
    });
    for (const secret of ['hunter2-long', 'OPENSSH', 'apiVersion', 'sa-token', 'PEM', 'n3w-password']) {
      expect(JSON.stringify(redacted)).not.toContain(secret);
    }
  });

  it('leaves a secret that was not given as null, so the entry shows which credential was used', () => {
    expect(redactSecrets({ input: { kubeconfig: 'apiVersion: v1', token: null, caCert: undefined } })).toEqual({ input: { kubeconfig: '[redacted]', token: null, caCert: undefined } });
  });

  it('names the target from the arguments or the input', () => {
    expect(targetOf({ nodeId: 'n1', input: { hostname: 'h' } })).toBe('n1');
    expect(targetOf({ input: { name: 'prod' } })).toBe('prod');
    expect(targetOf({ enabled: true })).toBeNull();
  });
});
