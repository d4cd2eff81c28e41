import { describe, expect, it } from 'vitest';
import { checkSshTarget, describeEndpoint, describeTarget, type SshTarget } from './ssh-target';

const target: SshTarget = { host: '198.18.0.11', username: 'root', auth: { kind: 'password', password: 'pw' } };

describe('SSH targets', () => {
  it('describes user, host and port, IPv6 in brackets, never the credential', () => {
    expect(describeTarget(target)).toBe('root@198.18.0.11:22');
    expect(describeEndpoint({ host: 'fd00::11', port: 2222 })).toBe('[fd00::11]:2222');
    expect(describeTarget({ ...target, host: 'worker-1.example.com' })).toBe('root@worker-1.example.com:22');
  });

  it.each<[string, Partial<SshTarget>, RegExp | null]>([
    ['fine', {}, null],
    ['a DNS name', { host: 'worker-1.lab' }, null],
    ['a shell in the host', { host: '$(reboot)' }, /^host /],
    ['port 0', { port: 0 }, /^port /],
    ['user with a space', { username: 'root; id' }, /^user /],
    ['empty password', { auth: { kind: 'password', password: '' } }, /password must not be empty/],
    ['empty key', { auth: { kind: 'privateKey', privateKey: '' } }, /private key must not be empty/],
    ['MD5 pin', { hostKey: { fingerprint: 'MD5:aa:bb' } }, /not an OpenSSH SHA256 fingerprint/],
  ])('checks %s', (_name, change, problem) => {
    const result = checkSshTarget({ ...target, ...change });
    if (problem === null) {
      expect(result).toBeNull();
    } else {
      expect(result).toMatch(problem);
    }
  });
});
