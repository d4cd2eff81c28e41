import type { AddressInfo } from 'node:net';
import ssh2, { Server as SshServer, type Connection, type ServerChannel } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSshSession } from './ssh-connect';
import type { SshSession } from './ssh-session';

/**
 * exec's channel handling against an in-process ssh2 server that plays the
 * remote shell: what goes over the wire, how the pid line is taken out of
 * stderr, the bounded tail, stdin, and the kill that a timeout sends on a
 * second channel. (Real sshd and real processes: test/ssh/ssh.test.ts.)
 */
const commands: string[] = [];
const hanging = new Map<number, ServerChannel>();
let server: SshServer;
let session: SshSession;
const clients = new Set<Connection>();

function answer(command: string, stream: ServerChannel): void {
  commands.push(command);
  const pidArg = /'ccos-kill-group' '(\d+)'$/.exec(command);
  if (pidArg !== null) {
    const victim = hanging.get(Number(pidArg[1]));
    victim?.exit('TERM');
    victim?.end();
    stream.exit(0);
    stream.end();
    return;
  }
  if (command.endsWith("exec 'hang'")) {
    stream.stderr.write('ccos-exec-pid:5151\n');
    hanging.set(5151, stream);
    return;
  }
  if (command.endsWith("exec 'cat'")) {
    stream.stderr.write('ccos-exec-pid:77\n');
    const input: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => input.push(chunk));
    stream.on('end', () => {
      stream.write(Buffer.concat(input));
      stream.exit(0);
      stream.end();
    });
    return;
  }
  // A login shell's rc file that prints first, the pid line split across writes, lots of output, exit 3.
  stream.stderr.write('stdin: is not a tty\nccos-exec-');
  setTimeout(() => {
    stream.stderr.write('pid:4242\nwarning: careful\n');
    stream.write(`${'x'.repeat(100_000)}END\n`);
    stream.exit(3);
    stream.end();
  }, 20);
}

beforeAll(async () => {
  server = new SshServer({ hostKeys: [ssh2.utils.generateKeyPairSync('ed25519').private] }, (client) => {
    clients.add(client);
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => (ctx.method === 'password' ? ctx.accept() : ctx.reject(['password'])));
    client.on('session', (accept) => {
      accept().on('exec', (acceptExec, _reject, info) => answer(info.command, acceptExec()));
    });
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  session = await openSshSession({ host: '127.0.0.1', port, username: 'root', auth: { kind: 'password', password: 'pw-unit' } });
});

afterAll(async () => {
  await session.close();
  clients.forEach((client) => client.end());
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('exec', () => {
  it('sends quoted argv behind the pid wrapper and reports exit, pid, tails and sizes', async () => {
    const chunks: string[] = [];
    const result = await session.exec(['report', "it's $(here)"], { tailBytes: 1_000, onStderr: (chunk) => chunks.push(chunk.toString()) });
    expect(commands.at(-1)).toBe(`printf 'ccos-exec-pid:%s\\n' "$$" >&2; exec 'report' 'it'\\''s $(here)'`);
    expect(result).toMatchObject({
      command: "'report' 'it'\\''s $(here)'",
      exitCode: 3,
      signal: null,
      pid: 4242,
      stderr: 'stdin: is not a tty\nwarning: careful\n',
      stdoutBytes: 100_004,
      stdoutTruncated: true,
      stderrTruncated: false,
      timedOut: false,
      aborted: false,
    });
    expect(result.stdout).toHaveLength(1_000);
    expect(result.stdout.endsWith('xEND\n')).toBe(true);
    expect(chunks.join('')).toBe(result.stderr);
  });

  it('delivers stdin and then EOF', async () => {
    const result = await session.exec(['cat'], { stdin: Buffer.from('line one\nline two') });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'line one\nline two', stderr: '', pid: 77 });
  });

  it('on timeout kills the process group through a second channel and reports it', async () => {
    const started = Date.now();
    const result = await session.exec(['hang'], { timeoutMs: 200 });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'TERM', pid: 5151 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(commands.at(-1)).toMatch(/exec 'sh' '-c' 'kill -s TERM -- "-\$1".*' 'ccos-kill-group' '5151'$/s);
  });

  it('refuses NUL in argv before anything is sent', async () => {
    const before = commands.length;
    await expect(session.exec(['echo', 'a\0b'])).rejects.toThrow(/argument 1 contains a NUL byte/);
    expect(commands.length).toBe(before);
  });
});
