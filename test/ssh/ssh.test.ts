import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  canStreamCompressed,
  installCompressed,
  openSshSession,
  readRemoteFacts,
  SshError,
  SshPool,
  uploadFile,
  verifyRemoteSha256,
  type SshConnectEvent,
  type SshConnectOptions,
  type SshTarget,
} from '@ccos/api/data-access-ssh';
import { LAB_LOCK_TIMEOUT_MS, startLab, type Lab, type LabHost } from '@ccos/tools/lab';

/**
 * data-access-ssh against real OpenSSH sshd on lab hosts: login by password
 * and key, one attempt on a wrong password (counted in sshd's own log),
 * unreachable hosts, a re-keyed host, hostile argv, verified uploads,
 * command timeouts, a dead link noticed by keep-alive, and the pool's
 * limit. No error may carry a secret.
 */
const PASSWORD = 'e2e-Ssh-Secret-9f3c';
const WRONG_PASSWORD = 'e2e-Wrong-Guess-71ab';
const PASSPHRASE = 'e2e-key-Passphrase-5d2e';

let lab: Lab | undefined;
let workDir = '';
let labKey = '';
let pemKey = '';
const caught: unknown[] = [];
const hosts = (): LabHost[] => (lab as Lab).hosts as LabHost[];
const host = (n: number): LabHost => hosts()[n - 1] as LabHost;
/** A host's address as a regular expression part. */
const ipPattern = (h: LabHost): string => h.ip.replaceAll('.', '\\.');

function passwordTarget(h: LabHost, change: Partial<SshTarget> = {}): SshTarget {
  return { host: h.ip, port: h.port, username: h.user, auth: { kind: 'password', password: PASSWORD }, ...change };
}

function keyTarget(h: LabHost, change: Partial<SshTarget> = {}): SshTarget {
  return { host: h.ip, port: h.port, username: h.user, auth: { kind: 'privateKey', privateKey: labKey }, ...change };
}

async function expectSshError(promise: Promise<unknown>, kind: SshError['kind']): Promise<SshError> {
  const error = await promise.then(() => null, (thrown: unknown) => thrown);
  caught.push(error);
  expect(error).toBeInstanceOf(SshError);
  expect((error as SshError).kind, (error as Error).message).toBe(kind);
  return error as SshError;
}

async function inHost(h: LabHost, argv: string[]): Promise<string> {
  const result = await (lab as Lab).exec(h.id, argv, { allowFailure: true });
  return result.stdout;
}

/** Waits (up to 10 s) until a shell condition holds on the host. */
async function inHostUntil(h: LabHost, condition: string): Promise<void> {
  const script = `for _ in $(seq 1 200); do ${condition} && exit 0; sleep 0.05; done; echo "still not true after 10 s: ${condition}" >&2; exit 1`;
  await (lab as Lab).exec(h.id, ['sh', '-c', script]);
}

describe('data-access-ssh against lab sshd', () => {
  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'ccos-ssh-e2e-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '2048', '-m', 'PEM', '-N', PASSPHRASE, '-C', 'e2e-pem', '-f', join(workDir, 'pem_rsa')]);
    pemKey = readFileSync(join(workDir, 'pem_rsa'), 'utf8');
    lab = await startLab({
      hosts: 10,
      password: PASSWORD,
      authorizedKeys: [readFileSync(join(workDir, 'pem_rsa.pub'), 'utf8')],
      artifacts: false,
      name: 'test/ssh',
      log: (message) => {
        if (message.startsWith('waiting')) {
          console.log(message);
        }
      },
    });
    labKey = readFileSync(lab.privateKeyPath, 'utf8');
  }, LAB_LOCK_TIMEOUT_MS + 120_000);

  afterAll(async () => {
    try {
      await lab?.stop();
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });

  it('logs in with the password, reports the host key as ssh-keygen does, and accepts it once pinned', async () => {
    const h1 = host(1);
    const session = await openSshSession(passwordTarget(h1));
    try {
      expect(session.hostKeyStatus).toBe('first-use');
      expect(session.hostKey.algorithm).toBe('ssh-ed25519');
      expect(session.hostKey.fingerprint).toBe((await (lab as Lab).hostKeyFingerprint(h1.id)).ed25519);
      const keygen = await inHost(h1, ['ssh-keygen', '-lf', '/etc/ssh/ssh_host_ed25519_key.pub']);
      expect(keygen.split(' ')[1]).toBe(session.hostKey.fingerprint);
      const who = await session.exec(['sh', '-c', 'id -un; hostname']);
      expect(who).toMatchObject({ exitCode: 0, stdout: `root\n${h1.hostname}\n`, stderr: '' });
      expect(who.pid).toBeGreaterThan(1);
    } finally {
      await session.close();
    }
    const pinned = await openSshSession(passwordTarget(h1, { hostKey: session.hostKey }));
    expect(pinned.hostKeyStatus).toBe('matches-pin');
    await pinned.close();
  });

  it('logs in with the lab key (OpenSSH format) and an encrypted PEM key, and reads the host facts', async () => {
    const h1 = host(1);
    const byKey = await openSshSession(keyTarget(h1));
    const facts = await readRemoteFacts(byKey, { diskPath: '/opt/ccos-scaler/not/yet' });
    await byKey.close();
    expect(facts).toMatchObject({
      hostname: h1.hostname,
      os: { id: 'ccos', versionId: '4.12', prettyName: 'CCOS 4.12 (lab host)', idLike: ['rhel', 'fedora'] },
      disk: { path: '/opt/ccos-scaler/not/yet', measuredPath: '/opt' },
    });
    expect(facts.arch).toBe(execFileSync('uname', ['-m'], { encoding: 'utf8' }).trim());
    expect(facts.kernel).toBe(execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim());
    expect(facts.disk.freeBytes).toBeGreaterThan(0);
    expect(facts.disk.totalBytes).toBeGreaterThanOrEqual(facts.disk.freeBytes);

    const byPem = await openSshSession(keyTarget(h1, { auth: { kind: 'privateKey', privateKey: pemKey, passphrase: PASSPHRASE } }));
    expect((await byPem.exec(['hostname'])).stdout).toBe(`${h1.hostname}\n`);
    await byPem.close();
    const wrong = await expectSshError(openSshSession(keyTarget(h1, { auth: { kind: 'privateKey', privateKey: pemKey, passphrase: 'nope-nope' } })), 'AUTH_FAILED');
    expect(wrong.code).toBe('INVALID_KEY');
  });

  it('sends a wrong password once and says AUTH_FAILED; sshd logs exactly one failure', async () => {
    const h2 = host(2);
    // A second sshd on the host, logging to a file (the lab has no syslog), so the attempts can be counted.
    const log = '/var/log/ccos-e2e-sshd.log';
    await (lab as Lab).exec(h2.id, ['env', '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', '/usr/sbin/sshd', '-E', log, '-o', 'Port=2222', '-o', 'PidFile=/run/sshd-e2e.pid']);
    // sshd may detach before it listens; it writes its pid file once the port is open (as the lab's own start waits for).
    await inHostUntil(h2, 'test -s /run/sshd-e2e.pid');
    try {
      const attempts: string[] = [];
      const started = Date.now();
      const error = await expectSshError(openSshSession(passwordTarget(h2, { port: 2222, auth: { kind: 'password', password: WRONG_PASSWORD } }), {
        onEvent: (event: SshConnectEvent) => event.type === 'auth-attempt' && attempts.push(event.method),
      }), 'AUTH_FAILED');
      const elapsed = Date.now() - started;
      // Printed, not asserted: wall time on a shared machine says nothing. One attempt is what the
      // client's events and sshd's own log below prove.
      console.log(`wrong password: AUTH_FAILED after ${elapsed} ms (sshd's PAM delays a failure by about 2 s)`);
      expect(error.message).toMatch(new RegExp(`root@?.*${ipPattern(h2)}:2222 failed: the server rejected the password`));
      expect(attempts).toEqual(['none', 'password']);
      // sshd writes the failure after it answers.
      await inHostUntil(h2, `grep -q 'Failed password for root' ${log}`);
      const text = await inHost(h2, ['cat', log]);
      expect(text.match(/Failed password for root/g), text).toHaveLength(1);
      expect(text).not.toMatch(/Accepted/);
      expect(text).not.toContain(WRONG_PASSWORD);

      const ok = await openSshSession(passwordTarget(h2, { port: 2222 }));
      await ok.close();
      await inHostUntil(h2, `grep -q 'Accepted password for root' ${log}`);
      expect((await inHost(h2, ['cat', log])).match(/Accepted password for root/g)).toHaveLength(1);
    } finally {
      await (lab as Lab).exec(h2.id, ['sh', '-c', 'kill "$(cat /run/sshd-e2e.pid)"'], { allowFailure: true });
    }
  });

  it('says UNREACHABLE within the connect timeout when the link is cut', async () => {
    const h3 = host(3);
    await (lab as Lab).faults.cutLink(h3.id);
    try {
      const started = Date.now();
      const error = await expectSshError(openSshSession(passwordTarget(h3), { connectTimeoutMs: 1_500 }), 'UNREACHABLE');
      const elapsed = Date.now() - started;
      console.log(`cut link: UNREACHABLE after ${elapsed} ms (connect timeout 1500 ms)`);
      expect(elapsed).toBeGreaterThanOrEqual(1_400);
      expect(elapsed).toBeLessThan(1_500 + 2_000);
      expect(error.message).toMatch(new RegExp(`Cannot reach SSH at ${ipPattern(h3)}:22: no answer within 1\\.5 s`));
    } finally {
      await (lab as Lab).faults.restoreLink(h3.id);
    }
  });

  it('says UNREACHABLE (connection refused) at once when sshd is stopped', async () => {
    const h4 = host(4);
    await (lab as Lab).faults.stopSshd(h4.id);
    try {
      const started = Date.now();
      const error = await expectSshError(openSshSession(passwordTarget(h4)), 'UNREACHABLE');
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(error.code).toBe('ECONNREFUSED');
      expect(error.message).toMatch(new RegExp(`${ipPattern(h4)}:22: connection refused.*sshd is running`));
    } finally {
      await (lab as Lab).faults.startSshd(h4.id);
    }
  });

  it('refuses a re-keyed host with HOST_KEY_CHANGED before any credential is sent', async () => {
    const h5 = host(5);
    const first = await openSshSession(passwordTarget(h5));
    const pin = first.hostKey;
    await first.close();
    const fresh = await (lab as Lab).faults.rekey(h5.id);
    const events: SshConnectEvent[] = [];
    const error = await expectSshError(openSshSession(passwordTarget(h5, { hostKey: pin }), { onEvent: (event) => events.push(event) }), 'HOST_KEY_CHANGED');
    expect(error).toMatchObject({ expectedFingerprint: pin.fingerprint, offeredFingerprint: fresh.ed25519, offeredAlgorithm: 'ssh-ed25519' });
    expect(error.message).toContain(pin.fingerprint);
    expect(error.message).toContain(fresh.ed25519);
    // The refusal happened in key exchange: no login method was tried, not even `none`.
    expect(events.map((event) => event.type)).toEqual(['tcp-connected', 'banner', 'host-key', 'failed']);
  });

  it('passes hostile arguments through literally and runs none of them', async () => {
    const h1 = host(1);
    const hostile = [
      '$(touch /tmp/pwned)', '; touch /tmp/pwned2', '`touch /tmp/pwned3`', 'x\ntouch /tmp/pwned4', "'; touch /tmp/pwned5; '",
      '| touch /tmp/pwned6', '&& touch /tmp/pwned7', '"$(touch /tmp/pwned8)"', '$HOME', '*', '', '-n', 'Grüße ✓', "it's",
    ];
    const session = await openSshSession(keyTarget(h1));
    try {
      const echoed = await session.exec(['printf', '%s\\0', ...hostile]);
      expect(echoed.exitCode).toBe(0);
      expect(echoed.stdout.split('\0').slice(0, -1)).toEqual(hostile);
      const viaEnv = await session.exec(['sh', '-c', 'printf %s "$VALUE"'], { env: { VALUE: hostile.join('|') } });
      expect(viaEnv.stdout).toBe(hostile.join('|'));
      const viaStdin = await session.exec(['cat'], { stdin: hostile.join('\n') });
      expect(viaStdin.stdout).toBe(hostile.join('\n'));
    } finally {
      await session.close();
    }
    expect(await inHost(h1, ['sh', '-c', 'ls -A /tmp | grep pwned || true'])).toBe('');
    expect(existsSync('/tmp/pwned')).toBe(false);
  });

  it('uploads 20 MB with the mode set and SHA-256 verified, and detects a corrupted copy', async () => {
    const h7 = host(7);
    const local = join(workDir, 'boot-worker');
    const content = randomBytes(20 * 1024 * 1024);
    writeFileSync(local, content);
    const sha256 = createHash('sha256').update(content).digest('hex');
    const remotePath = '/opt/ccos-scaler/bin/boot-worker';
    const session = await openSshSession(keyTarget(h7));
    try {
      const progress: number[] = [];
      const result = await uploadFile(session, { source: local, remotePath, mode: 0o755, sha256, onProgress: (p) => progress.push(p.bytesSent) });
      console.log(`upload: ${(result.bytes / 1e6).toFixed(1)} MB in ${result.durationMs} ms = ${(result.bytesPerSecond / 1e6).toFixed(1)} MB/s including the remote sha256 (${result.verifiedBy})`);
      expect(result).toMatchObject({ remotePath, bytes: content.length, sha256, verifiedBy: 'openssl' });
      expect(progress.at(-1)).toBe(content.length);
      expect(progress.every((value, index) => index === 0 || value > (progress[index - 1] ?? 0))).toBe(true);
      expect(await inHost(h7, ['stat', '-c', '%a %s %U', remotePath])).toBe(`755 ${content.length} root\n`);
      expect((await inHost(h7, ['sha256sum', remotePath])).split(' ')[0]).toBe(sha256);
      expect(await inHost(h7, ['ls', '-A', '/opt/ccos-scaler/bin'])).toBe('boot-worker\n');

      // Corrupt the landed copy: the verifier notices.
      await (lab as Lab).exec(h7.id, ['truncate', '-s', '-1', remotePath]);
      const corrupt = await expectSshError(verifyRemoteSha256(session, remotePath, sha256), 'CHECKSUM_MISMATCH');
      expect(corrupt).toMatchObject({ expectedSha256: sha256 });
      expect(corrupt.actualSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(corrupt.actualSha256).not.toBe(sha256);
      expect(corrupt.message).toContain(remotePath);

      // A source that is not what the manifest says is never installed, and leaves no temporary file.
      const small = Buffer.from('#!/bin/sh\necho hi\n');
      const wrongSum = await expectSshError(uploadFile(session, { source: small, remotePath, mode: 0o700, sha256: 'f'.repeat(64) }), 'CHECKSUM_MISMATCH');
      expect(wrongSum.message).toMatch(/local source .* expected f{64}.*Nothing was installed/);
      expect(Number((await inHost(h7, ['stat', '-c', '%s', remotePath])).trim())).toBe(content.length - 1);
      expect(await inHost(h7, ['ls', '-A', '/opt/ccos-scaler/bin'])).toBe('boot-worker\n');

      // A Buffer upload replaces the file atomically with the new mode.
      const replaced = await uploadFile(session, { source: small, remotePath, mode: 0o700 });
      expect(replaced.bytes).toBe(small.length);
      expect(await inHost(h7, ['stat', '-c', '%a %s', remotePath])).toBe(`700 ${small.length}\n`);
      expect((await session.exec([remotePath])).stdout).toBe('hi\n');
    } finally {
      await session.close();
    }
  });

  it('installs a zstd stream through one exec channel: the host checks size and SHA-256 before the file takes its place', async () => {
    const h7 = host(7);
    // Half random, half text: it compresses, as the agent executable does (83 → 29 MiB).
    const content = Buffer.concat([randomBytes(6 * 1024 * 1024), Buffer.from('boot-worker '.repeat(512 * 1024))]);
    const sha256 = createHash('sha256').update(content).digest('hex');
    const compressed = execFileSync('zstd', ['-3', '-q', '-c'], { input: content, maxBuffer: 64 * 1024 * 1024 });
    expect(compressed.length).toBeLessThan(content.length * 0.75);
    const folder = '/opt/ccos-scaler/stream';
    const remotePath = `${folder}/boot-worker`;
    const session = await openSshSession(keyTarget(h7));
    try {
      expect(await canStreamCompressed(session, 'zstd')).toBe(true);
      const result = await installCompressed(session, { compressed, codec: 'zstd', sha256, size: content.length, remotePath, mode: 0o755 });
      console.log(`zstd stream: ${(content.length / 1e6).toFixed(1)} MB as ${(compressed.length / 1e6).toFixed(1)} MB in ${result.durationMs} ms, checked on the host`);
      expect(result).toMatchObject({ remotePath, bytes: content.length, bytesSent: compressed.length, sha256 });
      expect(await inHost(h7, ['stat', '-c', '%a %s %U', remotePath])).toBe(`755 ${content.length} root\n`);
      expect((await inHost(h7, ['sha256sum', remotePath])).split(' ')[0]).toBe(sha256);

      // What the host got is checked against the hash sent in the command, not trusted: a wrong one installs nothing.
      const other = Buffer.from('#!/bin/sh\necho other\n');
      const otherCompressed = execFileSync('zstd', ['-q', '-c'], { input: other });
      const mismatch = await expectSshError(installCompressed(session, { compressed: otherCompressed, codec: 'zstd', sha256, size: other.length, remotePath, mode: 0o755 }), 'CHECKSUM_MISMATCH');
      expect(mismatch).toMatchObject({ expectedSha256: sha256, actualSha256: createHash('sha256').update(other).digest('hex') });
      // A cut stream and a wrong size install nothing either.
      const cut = await expectSshError(installCompressed(session, { compressed: compressed.subarray(0, compressed.length >> 1), codec: 'zstd', sha256, size: content.length, remotePath, mode: 0o755 }), 'REMOTE_FAILED');
      expect(cut.message).toMatch(/decompress zstd .*nothing was installed/);
      const size = await expectSshError(installCompressed(session, { compressed, codec: 'zstd', sha256, size: content.length + 1, remotePath, mode: 0o755 }), 'REMOTE_FAILED');
      expect(size.message).toContain(`the decompressed copy has ${content.length} bytes, expected ${content.length + 1}; nothing was installed`);
      expect((await inHost(h7, ['sha256sum', remotePath])).split(' ')[0]).toBe(sha256);
      expect(await inHost(h7, ['ls', '-A', folder])).toBe('boot-worker\n');

      // From a file, read as it is sent (the service's agent copy is never held in memory); one it cannot read installs nothing and says why.
      const local = await mkdtemp(join(tmpdir(), 'stream-'));
      try {
        await writeFile(join(local, 'boot-worker.zst'), compressed);
        await inHost(h7, ['rm', '-f', remotePath]);
        const fromFile = await installCompressed(session, { compressed: { path: join(local, 'boot-worker.zst'), bytes: compressed.length }, codec: 'zstd', sha256, size: content.length, remotePath, mode: 0o755 });
        expect(fromFile).toMatchObject({ bytes: content.length, bytesSent: compressed.length, sha256 });
        expect((await inHost(h7, ['sha256sum', remotePath])).split(' ')[0]).toBe(sha256);
        const unreadable = await expectSshError(installCompressed(session, { compressed: { path: join(local, 'gone.zst'), bytes: compressed.length }, codec: 'zstd', sha256, size: content.length, remotePath: `${folder}/other`, mode: 0o755 }), 'REMOTE_FAILED');
        expect(unreadable.message).toMatch(/^Reading the input sent to a command on \S+ failed: ENOENT: no such file or directory/);
        expect(await inHost(h7, ['ls', '-A', folder])).toBe('boot-worker\n');
      } finally {
        await rm(local, { recursive: true, force: true });
      }
    } finally {
      await session.close();
    }
  });

  it('runs commands and installs through sudo -n for a non-root user', async () => {
    const h8 = host(8);
    // The machine has no sudo; a stand-in on the host's private /usr/local/bin records how it is
    // called and runs the command (without raising privileges), which is enough to prove the flow.
    const fakeSudo = [
      '#!/bin/sh',
      'printf "%s %s %s\\n" "$1" "$2" "$3" >> /tmp/deploy/sudo.log',
      '[ "$1" = -n ] || { echo "sudo: a password is required" >&2; exit 1; }',
      'shift; [ "$1" = -- ] && shift',
      'exec "$@"',
      '',
    ].join('\n');
    await (lab as Lab).exec(h8.id, ['sh', '-c', [
      'useradd -m -d /tmp/deploy -s /bin/sh deploy',
      `printf 'deploy:%s\\n' "$1" | chpasswd`,
      'cat > /usr/local/bin/sudo && chmod 755 /usr/local/bin/sudo',
      'install -d -o deploy /opt/deploy-owned',
    ].join(' && '), 'setup', PASSWORD], { input: fakeSudo });
    const session = await openSshSession({ ...passwordTarget(h8), username: 'deploy', sudo: true });
    try {
      expect(session.sudo).toBe(true);
      expect((await session.exec(['id', '-un'])).stdout).toBe('deploy\n');
      expect((await session.exec(['id', '-un'], { sudo: false })).stdout).toBe('deploy\n');
      const remotePath = '/opt/deploy-owned/bin/agent';
      const uploaded = await uploadFile(session, { source: Buffer.from('#!/bin/sh\necho via-sudo\n'), remotePath, mode: 0o750 });
      expect(uploaded.verifiedBy).toBe('openssl');
      expect(await inHost(h8, ['stat', '-c', '%a', remotePath])).toBe('750\n');
      expect(await inHost(h8, ['sh', '-c', 'ls -A /tmp | grep ccos-upload || true'])).toBe('');
      const calls = (await inHost(h8, ['cat', '/tmp/deploy/sudo.log'])).trim().split('\n');
      expect(calls[0]).toBe('-n -- id');
      expect(calls.filter((line) => line === '-n -- sh').length).toBeGreaterThanOrEqual(4);
      expect(calls.every((line) => line.startsWith('-n -- '))).toBe(true);

      // Without sudo, SFTP as this user cannot write a root-owned folder: a clear REMOTE_FAILED.
      const denied = await expectSshError(uploadFile(session, { source: Buffer.from('x'), remotePath: '/opt/agent', sudo: false }), 'REMOTE_FAILED');
      expect(denied.message).toMatch(new RegExp(`Creating /opt/\\.agent\\.ccos-upload-[0-9a-f]+ on ${ipPattern(h8)}:22 failed: Permission denied`));
    } finally {
      await session.close();
    }
  });

  it('kills a command at its timeout, with everything it started', async () => {
    const h1 = host(1);
    const session = await openSshSession(keyTarget(h1));
    try {
      const started = Date.now();
      const result = await session.exec(['sh', '-c', 'sleep 31 & sleep 30'], { timeoutMs: 1_000 });
      const elapsed = Date.now() - started;
      console.log(`sleep 30 with a 1 s timeout: returned after ${elapsed} ms, signal ${result.signal}`);
      expect(result).toMatchObject({ timedOut: true, exitCode: null });
      expect(elapsed).toBeLessThan(3_000);
      expect(result.pid).not.toBeNull();
      // No PID namespace in the lab: the host's processes are the machine's. Nothing of the group is
      // left once the TERM the kill sent is handled (the exec ends when its own shell does; a busy
      // machine may take a moment to end the group's other members).
      await expect.poll(() => liveGroupMembers(result.pid ?? 0), { timeout: 5_000 }).toEqual([]);

      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const aborted = await session.exec(['sleep', '30'], { signal: controller.signal });
      expect(aborted).toMatchObject({ aborted: true, timedOut: false });
      await expect.poll(() => liveGroupMembers(aborted.pid ?? 0), { timeout: 5_000 }).toEqual([]);
      // The session is still usable.
      expect((await session.exec(['echo', 'alive'])).stdout).toBe('alive\n');
    } finally {
      await session.close();
    }
  });

  it('notices a dead link through keep-alives and fails the running command with CONNECTION_LOST', async () => {
    const h6 = host(6);
    const session = await openSshSession(keyTarget(h6), { keepaliveIntervalMs: 500, keepaliveCountMax: 2 });
    try {
      const running = session.exec(['sleep', '20']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await (lab as Lab).faults.cutLink(h6.id);
      const started = Date.now();
      const error = await expectSshError(running, 'CONNECTION_LOST');
      console.log(`cut link under a running command: CONNECTION_LOST after ${Date.now() - started} ms (keep-alive 500 ms x 2)`);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(error.code).toBe('KEEPALIVE');
      expect(session.closed).toBe(true);
      await expectSshError(session.exec(['true']), 'CONNECTION_LOST');
    } finally {
      await session.close();
      await (lab as Lab).faults.restoreLink(h6.id);
    }
  });

  it('works on 10 hosts through a pool of 3 without ever holding more than 3 sessions', async () => {
    let open = 0;
    let peak = 0;
    const pool = new SshPool({
      maxSessions: 3,
      open: async (target, options: SshConnectOptions) => {
        const session = await openSshSession(target, options);
        open += 1;
        peak = Math.max(peak, open);
        const close = session.close.bind(session);
        session.close = async () => {
          open -= 1;
          await close();
        };
        return session;
      },
    });
    const started = Date.now();
    const names = await Promise.all(hosts().map((h) => pool.run(keyTarget(h), async (session) => {
      const result = await session.exec(['sh', '-c', 'hostname; sleep 0.3']);
      return result.stdout.trim();
    })));
    console.log(`pool: 10 hosts, limit 3, ${Date.now() - started} ms, peak ${pool.stats.peak}`);
    expect(names).toEqual(hosts().map((h) => h.hostname));
    expect(peak).toBeLessThanOrEqual(3);
    expect(pool.stats.peak).toBe(3);
    expect(open).toBe(0);
    await pool.close();
  });

  it('never puts a secret into an error', () => {
    expect(caught.length).toBeGreaterThanOrEqual(8);
    const secrets = [PASSWORD, WRONG_PASSWORD, PASSPHRASE, 'nope-nope',
      ...[labKey, pemKey].flatMap((key) => key.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----')))];
    for (const error of caught) {
      const views = [String(error), JSON.stringify(error), inspect(error, { depth: 10, showHidden: true }), (error as Error).stack ?? ''];
      for (const view of views) {
        for (const secret of secrets) {
          expect(view.includes(secret), `${secret.slice(0, 6)}… found in ${view.slice(0, 120)}`).toBe(false);
        }
      }
    }
  });
});

/** Live (not zombie) pids in process group `pgid`; the lab has no PID namespace, so /proc shows the hosts' processes. */
function liveGroupMembers(pgid: number): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((entry) => {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(group) === pgid && state !== 'Z' ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}
