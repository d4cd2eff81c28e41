import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { formatMessage } from '@ccos/shared/messages';
import { checksumMismatch, classifyConnectFailure, connectionLost, isSshError, SshError, type ConnectFailure } from './ssh-errors';

const PASSWORD = 'Hunter2-sup3r-secret';
const base: ConnectFailure = { endpoint: '198.18.0.11:22', username: 'root', phase: 'connect', configuredMethod: 'password', secrets: [PASSWORD] };
const errno = (code: string, message = `connect ${code} 198.18.0.11:22`) => Object.assign(new Error(message), { code, level: 'client-socket' });
const ssh2Error = (message: string, level: string) => Object.assign(new Error(message), { level });
const offered = { fingerprint: 'SHA256:CbvF9I9cNtSY0DQ6sQBEr0zjNnY+RKgAS5NUYeyuyCA', algorithm: 'ssh-ed25519' };
const pinned = 'SHA256:CsWEHVXz6a4ZTspEtlVJcMcB5jlZMH9feTDuYRjqh54';

describe('classifyConnectFailure', () => {
  it.each<[string, Partial<ConnectFailure>, SshError['kind'], RegExp]>([
    ['refused', { error: errno('ECONNREFUSED') }, 'UNREACHABLE', /connection refused \(ECONNREFUSED\).*sshd is running/],
    ['no route', { error: errno('EHOSTUNREACH') }, 'UNREACHABLE', /no route to host.*powered on/],
    ['network unreachable', { error: errno('ENETUNREACH') }, 'UNREACHABLE', /network unreachable/],
    ['kernel TCP timeout', { error: errno('ETIMEDOUT') }, 'UNREACHABLE', /connection timed out/],
    ['unknown name', { error: errno('ENOTFOUND', 'getaddrinfo ENOTFOUND node-7') }, 'UNREACHABLE', /Cannot resolve the host name/],
    ['our connect timer', { timeoutMs: 3000 }, 'UNREACHABLE', /no answer within 3 s.*firewall drops port 22/],
    ['silent after TCP', { phase: 'banner', timeoutMs: 2500 }, 'UNREACHABLE', /sent no SSH banner within 2\.5 s/],
    ['closed before banner', { phase: 'banner', error: ssh2Error('Connection lost before handshake', 'protocol') }, 'UNREACHABLE', /closed the connection before the SSH banner/],
    ['reset before banner', { phase: 'banner', error: errno('ECONNRESET', 'read ECONNRESET') }, 'UNREACHABLE', /before the SSH banner/],
    ['stalled key exchange', { phase: 'handshake', timeoutMs: 20000 }, 'TIMEOUT', /did not finish within 20 s.*during key exchange/],
    ['stalled login', { phase: 'auth', timeoutMs: 20000 }, 'TIMEOUT', /during login/],
    ['wrong password', { phase: 'auth', attemptedMethod: 'password', serverMethods: ['publickey', 'password'], error: ssh2Error('All configured authentication methods failed', 'client-authentication') }, 'AUTH_FAILED', /rejected the password.*only one attempt/],
    ['wrong key', { phase: 'auth', configuredMethod: 'publickey', attemptedMethod: 'publickey', error: ssh2Error('All configured authentication methods failed', 'client-authentication') }, 'AUTH_FAILED', /rejected the private key.*authorized_keys/],
    ['password not accepted', { phase: 'auth', serverMethods: ['publickey'], error: ssh2Error('All configured authentication methods failed', 'client-authentication') }, 'AUTH_FAILED', /does not accept password logins \(it offers: publickey\)/],
    ['closed after the attempt', { phase: 'auth', attemptedMethod: 'password' }, 'AUTH_FAILED', /rejected the password/],
    ['unusable key', { error: Object.assign(new Error('the passphrase is wrong'), { code: 'INVALID_KEY' }), configuredMethod: 'publickey' }, 'AUTH_FAILED', /private key for root@198\.18\.0\.11:22 cannot be used: the passphrase is wrong/],
    ['no common algorithm', { phase: 'handshake', error: ssh2Error('Handshake failed: no matching key exchange algorithm', 'handshake') }, 'PROTOCOL', /no matching key exchange algorithm.*algorithms/],
    ['closed in key exchange', { phase: 'handshake' }, 'PROTOCOL', /closed the SSH connection during the handshake/],
    ['something else', { phase: 'handshake', error: new Error('out of cheese') }, 'OTHER', /failed: out of cheese/],
  ])('%s', (_name, input, kind, message) => {
    const error = classifyConnectFailure({ ...base, ...input });
    expect(error).toBeInstanceOf(SshError);
    expect(error.kind).toBe(kind);
    expect(error.message).toMatch(message);
    expect(error.message).toContain('198.18.0.11:22');
    expect(error.endpoint).toBe('198.18.0.11:22');
    // Coded, so a node's reason shows in the reader's language; the English is the catalogue's.
    expect(error.coded?.message).toBe(error.message);
    const chinese = formatMessage('zh-CN', error.coded?.code ?? 'install.noReason', error.coded?.params);
    expect(chinese).toMatch(/[\u4e00-\u9fff]/);
    // Data (ssh2's own words, the endpoint) stays as it is; the catalogue's own words are Chinese.
    const data = Object.values(error.coded?.params ?? {}).filter((value): value is string => typeof value === 'string' && value !== '');
    expect(data.reduce((rest, value) => rest.split(value).join(' '), chinese)).not.toMatch(/\b(Cannot|failed|Check|the server|closed the)\b/);
  });

  it('words a rejected password in Chinese on a Chinese page', () => {
    const error = classifyConnectFailure({ ...base, phase: 'auth', attemptedMethod: 'password' });
    expect(error.coded?.code).toBe('ssh.authPasswordRejected');
    expect(formatMessage('zh-CN', 'ssh.authPasswordRejected', error.coded?.params)).toBe(
      '以 root 登录 198.18.0.11:22 的 SSH 失败：服务器拒绝了该密码。请检查该节点的用户名和密码后重试（只尝试了一次，因此不会因重试而锁定账户）。',
    );
  });

  it('reports a changed host key with both fingerprints, before anything was sent', () => {
    const error = classifyConnectFailure({ ...base, phase: 'handshake', error: ssh2Error('Host denied (verification failed)', 'handshake'), hostKeyMismatch: { expected: pinned, offered } });
    expect(error).toMatchObject({ kind: 'HOST_KEY_CHANGED', expectedFingerprint: pinned, offeredFingerprint: offered.fingerprint, offeredAlgorithm: 'ssh-ed25519' });
    expect(error.message).toMatch(/expected SHA256:CsWE.*offered SHA256:CbvF.*\(ssh-ed25519\)\. Nothing was sent to it/);
    expect(error.message).toContain('ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub');
  });

  it('treats a pinned key type the server no longer has as a changed key', () => {
    const error = classifyConnectFailure({ ...base, phase: 'handshake', hostKeyMismatch: { expected: pinned, offered: null, pinnedAlgorithm: 'ecdsa-sha2-nistp256' } });
    expect(error).toMatchObject({ kind: 'HOST_KEY_CHANGED', offeredFingerprint: null });
    expect(error.message).toMatch(/no longer offers a host key of the pinned type \(ecdsa-sha2-nistp256\)/);
  });

  it('never lets a secret through, in the message, JSON, inspect output or cause', () => {
    const error = classifyConnectFailure({ ...base, phase: 'handshake', error: new Error(`weird server text echoing ${PASSWORD}`) });
    expect(error.kind).toBe('OTHER');
    for (const text of [error.message, JSON.stringify(error), inspect(error, { depth: 10 }), String(error.stack), String((error.cause as Error).message)]) {
      expect(text).not.toContain(PASSWORD);
    }
    expect(error.message).toContain('[redacted]');
  });

  it('serializes only its documented fields', () => {
    const error = classifyConnectFailure({ ...base, error: errno('ECONNREFUSED') });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'SshError', kind: 'UNREACHABLE', message: error.message, endpoint: '198.18.0.11:22', code: 'ECONNREFUSED', phase: 'connect',
    });
  });
});

describe('other SSH errors', () => {
  it('names a lost connection and a checksum mismatch', () => {
    const lost = connectionLost('198.18.0.11:22', 'no answer to 3 keep-alives sent 5 s apart', { message: 'Keepalive timeout', code: 'KEEPALIVE' });
    expect(lost).toMatchObject({ kind: 'CONNECTION_LOST', code: 'KEEPALIVE' });
    expect(lost.message).toMatch(/connection to 198\.18\.0\.11:22 was lost \(no answer to 3 keep-alives/);
    const mismatch = checksumMismatch('198.18.0.11:22', '/opt/ccos/boot-worker', 'a'.repeat(64), 'b'.repeat(64));
    expect(mismatch).toMatchObject({ kind: 'CHECKSUM_MISMATCH', expectedSha256: 'a'.repeat(64), actualSha256: 'b'.repeat(64) });
    expect(isSshError(mismatch, 'CHECKSUM_MISMATCH')).toBe(true);
    expect(isSshError(mismatch, 'AUTH_FAILED')).toBe(false);
    expect(isSshError(new Error('x'))).toBe(false);
  });
});
