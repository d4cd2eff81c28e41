import { createServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { Server as SshServer, type AuthContext, type AuthenticationType, type Connection } from 'ssh2';
import { afterEach, describe, expect, it } from 'vitest';
import { parseableEd25519KeyPair } from '../testing/ed25519-key-pair';
import { fingerprintOfKeyBlob } from './host-key';
import { ConnectAttempt, openSshSession, type SshConnectEvent } from './ssh-connect';
import { SshError } from './ssh-errors';
import type { SshTarget } from './ssh-target';

/**
 * The connection logic against in-process peers that misbehave on purpose:
 * a closed port, a silent listener, a server that stalls after its banner,
 * and ssh2 servers that count every credential they are sent. (Real sshd:
 * test/ssh/ssh.test.ts.)
 */
const PASSWORD = 'Unit-Secret-pw-42';
const PASSPHRASE = 'unit-passphrase-77';
const serverKey = parseableEd25519KeyPair();
const serverFingerprint = fingerprintOfKeyBlob(Buffer.from(serverKey.public.split(' ')[1] ?? '', 'base64'));
const otherFingerprint = 'SHA256:CsWEHVXz6a4ZTspEtlVJcMcB5jlZMH9feTDuYRjqh54';
const clientKey = parseableEd25519KeyPair({ passphrase: PASSPHRASE, cipher: 'aes256-ctr', rounds: 2 });

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) {
    await close();
  }
});

function listen(server: TcpServer | SshServer): Promise<number> {
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function target(port: number, change: Partial<SshTarget> = {}): SshTarget {
  return { host: '127.0.0.1', port, username: 'root', auth: { kind: 'password', password: PASSWORD }, ...change };
}

async function failure(promise: Promise<unknown>): Promise<SshError> {
  const error = await promise.then(() => null, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(SshError);
  return error as SshError;
}

/** An ssh2 server that logs every authentication request and accepts only `accept`. */
async function countingServer(methods: AuthenticationType[], accept: (ctx: AuthContext) => boolean) {
  const seen: { method: string; password?: string }[] = [];
  const sockets = new Set<Connection>();
  const server = new SshServer({ hostKeys: [serverKey.private] }, (client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      seen.push({ method: ctx.method, ...(ctx.method === 'password' ? { password: ctx.password } : {}) });
      if (ctx.method === 'keyboard-interactive') {
        ctx.prompt([{ prompt: 'Password: ', echo: false }], (answers) => {
          seen.push({ method: 'keyboard-answer', password: answers[0] ?? '' });
          if (answers[0] === PASSWORD) {
            ctx.accept();
          } else {
            ctx.reject(methods);
          }
        });
        return;
      }
      if (accept(ctx)) {
        ctx.accept();
      } else {
        ctx.reject(methods);
      }
    });
  });
  closers.push(async () => {
    for (const socket of sockets) {
      socket.end();
    }
  });
  return { port: await listen(server), seen };
}

describe('openSshSession failures', () => {
  it('says UNREACHABLE, connection refused, at once for a closed port', async () => {
    const probe = createServer();
    const port = await listen(probe);
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const started = Date.now();
    const error = await failure(openSshSession(target(port)));
    expect(error).toMatchObject({ kind: 'UNREACHABLE', code: 'ECONNREFUSED', phase: 'connect', endpoint: `127.0.0.1:${port}` });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('says UNREACHABLE when the port answers TCP but never speaks SSH', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    closers.push(async () => held.forEach((socket) => socket.destroy()));
    const port = await listen(silent);
    const started = Date.now();
    const error = await failure(openSshSession(target(port), { connectTimeoutMs: 400 }));
    expect(error).toMatchObject({ kind: 'UNREACHABLE', code: 'BANNER_TIMEOUT', phase: 'banner' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('says TIMEOUT when the server sends its banner and then stalls', async () => {
    const held: Socket[] = [];
    const stalling = createServer((socket) => {
      held.push(socket);
      socket.write('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n');
    });
    closers.push(async () => held.forEach((socket) => socket.destroy()));
    const port = await listen(stalling);
    const events: SshConnectEvent['type'][] = [];
    const error = await failure(openSshSession(target(port), { connectTimeoutMs: 400, handshakeTimeoutMs: 500, onEvent: (event) => events.push(event.type) }));
    expect(error).toMatchObject({ kind: 'TIMEOUT', code: 'HANDSHAKE_TIMEOUT', phase: 'handshake' });
    expect(events).toEqual(['tcp-connected', 'banner', 'failed']);
  });

  it('refuses a changed host key before sending anything, with both fingerprints', async () => {
    const impostor = await countingServer(['password'], (ctx) => ctx.method === 'password');
    const events: SshConnectEvent[] = [];
    const error = await failure(openSshSession(target(impostor.port, { hostKey: { fingerprint: otherFingerprint } }), { onEvent: (event) => events.push(event) }));
    expect(error).toMatchObject({ kind: 'HOST_KEY_CHANGED', expectedFingerprint: otherFingerprint, offeredFingerprint: serverFingerprint, offeredAlgorithm: 'ssh-ed25519' });
    expect(impostor.seen).toEqual([]);
    expect(events.filter((event) => event.type === 'auth-attempt')).toEqual([]);
    expect(events.find((event) => event.type === 'host-key')).toMatchObject({ verdict: 'mismatch' });
    // The same server, trusted on first use, does get the password: the refusal above is what protected it.
    const session = await openSshSession(target(impostor.port));
    expect(session.hostKey).toEqual({ fingerprint: serverFingerprint, algorithm: 'ssh-ed25519' });
    expect(session.hostKeyStatus).toBe('first-use');
    await session.close();
    expect(impostor.seen.map((seen) => seen.method)).toEqual(['none', 'password']);
  });

  it('accepts the pinned key and reports it as matching', async () => {
    const server = await countingServer(['password'], (ctx) => ctx.method === 'password' && ctx.password === PASSWORD);
    const session = await openSshSession(target(server.port, { hostKey: { fingerprint: `${serverFingerprint}=`, algorithm: 'ssh-ed25519' } }));
    expect(session.hostKeyStatus).toBe('matches-pin');
    await session.close();
    expect(session.closed).toBe(true);
  });

  it('sends a wrong password exactly once', async () => {
    const server = await countingServer(['password', 'keyboard-interactive'], () => false);
    const attempts: string[] = [];
    const error = await failure(openSshSession(target(server.port), { onEvent: (event) => event.type === 'auth-attempt' && attempts.push(event.method) }));
    expect(error).toMatchObject({ kind: 'AUTH_FAILED', phase: 'auth' });
    expect(error.message).toMatch(/rejected the password/);
    expect(server.seen.filter((seen) => seen.password !== undefined)).toHaveLength(1);
    expect(attempts).toEqual(['none', 'password']);
  });

  it('answers a keyboard-interactive-only server once with the password', async () => {
    const server = await countingServer(['keyboard-interactive'], () => false);
    const session = await openSshSession(target(server.port));
    await session.close();
    expect(server.seen.map((seen) => seen.method)).toEqual(['none', 'keyboard-interactive', 'keyboard-answer']);
    const wrong = await failure(openSshSession(target(server.port, { auth: { kind: 'password', password: 'wrong-one' } })));
    expect(wrong.kind).toBe('AUTH_FAILED');
    expect(server.seen.filter((seen) => seen.method === 'keyboard-answer')).toHaveLength(2);
  });

  it('sends no password to a server that only takes keys, and says so', async () => {
    const server = await countingServer(['publickey'], () => false);
    const error = await failure(openSshSession(target(server.port)));
    expect(error).toMatchObject({ kind: 'AUTH_FAILED' });
    expect(error.message).toMatch(/does not accept password logins \(it offers: publickey\)/);
    expect(server.seen.map((seen) => seen.method)).toEqual(['none']);
  });

  it('logs in with an encrypted key and its passphrase, and refuses a wrong passphrase before connecting', async () => {
    const server = await countingServer(['publickey'], (ctx) => ctx.method === 'publickey');
    const session = await openSshSession(target(server.port, { auth: { kind: 'privateKey', privateKey: clientKey.private, passphrase: PASSPHRASE } }));
    await session.close();
    const before = server.seen.length;
    const wrong = await failure(openSshSession(target(server.port, { auth: { kind: 'privateKey', privateKey: clientKey.private, passphrase: 'not-it-at-all' } })));
    expect(wrong).toMatchObject({ kind: 'AUTH_FAILED', code: 'INVALID_KEY' });
    expect(wrong.message).toMatch(/cannot be used: the passphrase is wrong/);
    const missing = await failure(openSshSession(target(server.port, { auth: { kind: 'privateKey', privateKey: clientKey.private } })));
    expect(missing.message).toMatch(/encrypted and no passphrase was given/);
    expect(server.seen.length).toBe(before);
    for (const error of [wrong, missing]) {
      const everything = `${error.message} ${JSON.stringify(error)} ${inspect(error, { depth: 10 })} ${String(error.stack)}`;
      expect(everything).not.toContain('not-it-at-all');
      expect(everything).not.toContain(PASSPHRASE);
      expect(everything).not.toContain(clientKey.private.split('\n')[2] ?? 'never');
    }
  });

  it('refuses an invalid target before connecting', async () => {
    await expect(openSshSession(target(22, { host: 'a b' }))).rejects.toThrow(RangeError);
  });
});

describe('ConnectAttempt phases', () => {
  const offered = { fingerprint: serverFingerprint, algorithm: 'ssh-ed25519' };
  const details = { endpoint: 'h:22', username: 'root', secrets: [PASSWORD] };

  it('moves connect → banner → handshake → auth → ready, and a failure names the phase it happened in', () => {
    const attempt = new ConnectAttempt(null, 'password');
    const phases = [attempt.phase];
    attempt.tcpConnected();
    phases.push(attempt.phase);
    attempt.bannerReceived();
    phases.push(attempt.phase);
    expect(attempt.hostKeyOffered(offered)).toEqual({ accept: true, verdict: 'first-use' });
    attempt.authAttempt('none');
    phases.push(attempt.phase);
    expect(attempt.loggedIn()).toBe(true);
    phases.push(attempt.phase);
    expect(phases).toEqual(['connect', 'banner', 'handshake', 'auth', 'ready']);
    // Settled: a later close cannot turn the login into a failure.
    expect(attempt.failed(details)).toBeNull();
  });

  it('a banner that never came leaves the failure in the banner phase; a second failure is ignored', () => {
    const attempt = new ConnectAttempt(null, 'password');
    attempt.tcpConnected();
    expect(attempt.failed({ ...details, timeoutMs: 400 })).toMatchObject({ phase: 'banner', timeoutMs: 400, configuredMethod: 'password' });
    expect(attempt.settled).toBe(true);
    expect(attempt.failed(details)).toBeNull();
  });

  it('refuses a key other than the pinned one and reports both; no login counts without a checked key', () => {
    const attempt = new ConnectAttempt({ fingerprint: otherFingerprint, algorithm: 'ssh-ed25519' }, 'password');
    attempt.tcpConnected();
    attempt.bannerReceived();
    expect(attempt.hostKeyOffered(offered)).toEqual({ accept: false, verdict: 'mismatch' });
    expect(attempt.failed(details)).toMatchObject({ phase: 'handshake', hostKeyMismatch: { expected: otherFingerprint, offered, pinnedAlgorithm: 'ssh-ed25519' } });
    expect(new ConnectAttempt(null, 'password').loggedIn()).toBe(false);
  });

  it('a server without a key of the pinned type is a changed host key with nothing offered', () => {
    const attempt = new ConnectAttempt({ fingerprint: serverFingerprint, algorithm: 'ssh-rsa' }, 'publickey');
    attempt.clientError(new Error('Handshake failed: no matching host key format'));
    expect(attempt.failed(details)).toMatchObject({ phase: 'connect', hostKeyMismatch: { expected: serverFingerprint, offered: null, pinnedAlgorithm: 'ssh-rsa' } });
  });

  it('remembers what the server offered and the one credential sent, never the probe', () => {
    const attempt = new ConnectAttempt(null, 'password');
    attempt.authAttempt('none');
    attempt.methodsOffered(['password', 'publickey']);
    expect(attempt.failed(details)).not.toHaveProperty('attemptedMethod');
    const second = new ConnectAttempt(null, 'password');
    second.authAttempt('none');
    second.methodsOffered(['password']);
    second.authAttempt('password');
    expect(second.failed(details)).toMatchObject({ phase: 'auth', attemptedMethod: 'password', serverMethods: ['password'] });
  });
});

