import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type ConnectConfig } from 'ssh2';
import { fingerprintOfKeyBlob, type LabHost } from '@ccos/tools/lab';

/** What a remote command printed and its exit code. */
export interface RemoteResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
}

/** An ssh2 connection to a lab host and the host key fingerprint it presented. */
export interface SshSession {
  readonly fingerprint: string;
  exec(command: string, stdin?: string | Buffer): Promise<RemoteResult>;
  close(): void;
}

/** Connects with ssh2 (password or private key); rejects on timeout, refusal or auth failure. */
export function connectSsh(
  host: LabHost,
  auth: { readonly password: string } | { readonly privateKey: string | Buffer },
  readyTimeoutMs = 10_000,
  /** The address to connect from (one of this machine's); by default the route's. */
  localAddress?: string,
): Promise<SshSession> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let fingerprint = '';
    const config: ConnectConfig = {
      host: host.ip,
      port: host.port,
      username: host.user,
      readyTimeout: readyTimeoutMs,
      hostVerifier: (key: Buffer) => {
        fingerprint = fingerprintOfKeyBlob(key);
        return true;
      },
      ...auth,
      ...(localAddress === undefined ? {} : { localAddress }),
    };
    client.on('ready', () => resolve({
      fingerprint,
      exec: (command, stdin) => execOn(client, command, stdin),
      close: () => client.end(),
    }));
    client.on('error', reject);
    client.connect(config);
  });
}

function execOn(client: Client, command: string, stdin?: string | Buffer): Promise<RemoteResult> {
  return new Promise((resolve, reject) => {
    client.exec(command, (error, channel) => {
      if (error) {
        reject(error);
        return;
      }
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      let code: number | null = null;
      channel.on('data', (chunk: Buffer) => stdout.push(chunk));
      channel.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      channel.on('exit', (exitCode: number | null) => {
        code = exitCode;
      });
      channel.on('close', () => resolve({ stdout: Buffer.concat(stdout).toString(), stderr: Buffer.concat(stderr).toString(), code }));
      channel.end(stdin);
    });
  });
}

/** Runs the system `ssh` client; password login goes through SSH_ASKPASS (no sshpass needed). */
export async function systemSsh(
  host: LabHost,
  auth: { readonly password: string } | { readonly identityFile: string },
  command: string,
): Promise<RemoteResult> {
  const dir = await mkdtemp(join(tmpdir(), 'ccos-lab-ssh-'));
  try {
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir };
    const args = [
      '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR',
      '-o', 'ConnectTimeout=10', '-p', String(host.port),
    ];
    if ('password' in auth) {
      const askpass = join(dir, 'askpass');
      await writeFile(join(dir, 'password'), auth.password, { mode: 0o600 });
      await writeFile(askpass, `#!/bin/sh\ncat '${join(dir, 'password')}'\n`);
      await chmod(askpass, 0o700);
      Object.assign(env, { SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' });
      args.push('-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password', '-o', 'NumberOfPasswordPrompts=1');
    } else {
      args.push('-o', 'BatchMode=yes', '-o', 'PasswordAuthentication=no', '-i', auth.identityFile);
    }
    args.push(`${host.user}@${host.ip}`, command);
    return await new Promise((resolve) => {
      execFile('ssh', args, { env, timeout: 30_000 }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ stdout, stderr, code });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
