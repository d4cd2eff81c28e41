import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './password-hash';
import { SecretBox } from './secret-box';

const KEY = 'k'.repeat(40);

describe('SecretBox', () => {
  it('seals so that the plaintext is not visible and opens it back', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal('hunter2-password', 'node-ssh');
    expect(sealed).not.toContain('hunter2');
    expect(sealed).toMatch(/^v1\.[\w-]{8}\.[\w-]+\.[\w-]+$/);
    expect(box.open(sealed, 'node-ssh')).toBe('hunter2-password');
    expect(box.seal('hunter2-password', 'node-ssh')).not.toBe(sealed);
  });

  it('refuses a value sealed for another purpose, with another key, or tampered with', () => {
    const box = new SecretBox(KEY);
    const sealed = box.seal('secret', 'node-ssh');
    expect(() => box.open(sealed, 'cluster-credentials')).toThrow(/integrity check/);
    expect(() => new SecretBox('x'.repeat(40)).open(sealed, 'node-ssh')).toThrow(/sealed with key/);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3], 'base64url');
    body[body.length - 20] ^= 1;
    parts[3] = body.toString('base64url');
    expect(() => box.open(parts.join('.'), 'node-ssh')).toThrow(/integrity check/);
  });

  it('refuses a short SECRET_KEY', () => {
    expect(() => new SecretBox('short')).toThrow(/at least 32 characters/);
  });
});

describe('password hashing', () => {
  it('verifies the right password only', async () => {
    const cheap = { N: 1024, r: 8, p: 1 };
    const stored = await hashPassword('correct horse', cheap);
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$/);
    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('wrong horse', stored)).toBe(false);
    expect(await verifyPassword('correct horse', 'garbage')).toBe(false);
  });
});
