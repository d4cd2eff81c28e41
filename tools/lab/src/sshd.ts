import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runInHost } from './host-namespaces';
import { HOST_PATH, type LabLayout } from './lab-layout';
import { runCommand } from './run-command';
import { processAlive } from './standins/process-state';

/** Host key types a lab host offers; RSA is slow to generate, so it is optional. */
export type HostKeyType = 'ed25519' | 'ecdsa' | 'rsa';

/** The default host key types (fast to generate, understood by ssh2 and OpenSSH). */
export const DEFAULT_HOST_KEY_TYPES: readonly HostKeyType[] = ['ed25519', 'ecdsa'];

/**
 * The host's sshd configuration, as on a freshly installed host with root login allowed, for
 * logins from `sshFrom` only: the lab's gateway, where this machine's services and tests reach
 * the lab from. A service or agent of another lab, which would come from that lab's gateway,
 * is refused even if it knows the password (labs are never to meet).
 */
export function sshdConfig(ip: string, keyTypes: readonly HostKeyType[], sshFrom: string): string {
  return [
    '# Written by ccos-lab: a freshly installed host that lets root log in.',
    'Port 22',
    `ListenAddress ${ip}`,
    ...keyTypes.map((type) => `HostKey /etc/ssh/ssh_host_${type}_key`),
    'PermitRootLogin yes',
    `AllowUsers *@${sshFrom}`,
    'PasswordAuthentication yes',
    'PubkeyAuthentication yes',
    'KbdInteractiveAuthentication no',
    'AuthorizedKeysFile .ssh/authorized_keys',
    'UsePAM yes',
    'UseDNS no',
    'PrintMotd no',
    'PidFile /run/sshd.pid',
    // Tests open many sessions at once; the default 10:30:100 would drop some.
    'MaxStartups 200:30:400',
    'MaxSessions 50',
    'AcceptEnv LANG LC_*',
    'Subsystem sftp /usr/lib/openssh/sftp-server',
    '',
  ].join('\n');
}

/** Generates host keys of the given types into `sshDir` (replacing any). */
export async function generateHostKeys(sshDir: string, keyTypes: readonly HostKeyType[]): Promise<void> {
  await Promise.all(keyTypes.map(async (type) => {
    const file = join(sshDir, `ssh_host_${type}_key`);
    await rm(file, { force: true });
    await rm(`${file}.pub`, { force: true });
    await runCommand(['ssh-keygen', '-q', '-t', type, '-N', '', '-C', `root@lab`, '-f', file]);
  }));
}

/**
 * OpenSSH-style fingerprints (`SHA256:...`, unpadded base64 of the SHA-256 of
 * the key blob) of the host keys in `sshDir`, by key type.
 */
export async function hostKeyFingerprints(
  sshDir: string,
  keyTypes: readonly HostKeyType[],
): Promise<Partial<Record<HostKeyType, string>>> {
  const entries = await Promise.all(keyTypes.map(async (type) => {
    const line = await readFile(join(sshDir, `ssh_host_${type}_key.pub`), 'utf8');
    return [type, fingerprintOfPublicKey(line)] as const;
  }));
  return Object.fromEntries(entries);
}

/** The `SHA256:...` fingerprint of an OpenSSH public key line (`type base64 [comment]`). */
export function fingerprintOfPublicKey(line: string): string {
  const blob = line.trim().split(/\s+/)[1];
  if (blob === undefined) {
    throw new Error(`not an OpenSSH public key: ${line.slice(0, 40)}`);
  }
  return fingerprintOfKeyBlob(Buffer.from(blob, 'base64'));
}

/** The `SHA256:...` fingerprint of a raw SSH key blob (what ssh2's hostVerifier gets). */
export function fingerprintOfKeyBlob(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Starts the host's sshd inside its namespaces with the environment a
 * systemd-started sshd has, so sessions get a host-like PATH. sshd listens
 * before it detaches, so the port is open when this returns.
 */
export async function startSshd(layout: LabLayout, id: string, runDir: string): Promise<number> {
  await runInHost(layout, id, ['env', '-i', `PATH=${HOST_PATH}`, 'LANG=C.UTF-8', '/usr/sbin/sshd']);
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const pid = await readSshdPid(runDir);
    if (pid !== null) {
      return pid;
    }
    await sleep(10);
  }
  throw new Error(`sshd of ${id} started but wrote no pid file`);
}

/**
 * Stops the host's listening sshd, as `systemctl stop sshd` does: new
 * connections are refused, open sessions go on.
 */
export async function stopSshd(runDir: string): Promise<void> {
  const pid = await readSshdPid(runDir);
  if (pid === null) {
    return;
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let attempt = 0; attempt < 200 && processAlive(pid); attempt += 1) {
    await sleep(10);
  }
  await rm(join(runDir, 'sshd.pid'), { force: true });
}

/** The pid of the host's listening sshd, or null when it is not running. */
export async function readSshdPid(runDir: string): Promise<number | null> {
  const text = await readFile(join(runDir, 'sshd.pid'), 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : null;
}
