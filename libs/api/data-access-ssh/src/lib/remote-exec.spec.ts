import { Client, type ServerChannel } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PlayedSshHost, startPlayedSshHost } from '../testing/played-ssh-host';
import { buildRemoteCommand, displayCommand } from './remote-command';
import { killStep, PidLineFilter, RemoteExecution, type ExecContext, type ExecPhase } from './remote-exec';
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
let host: PlayedSshHost;
let session: SshSession;

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
  host = await startPlayedSshHost(answer);
  session = await openSshSession({ host: '127.0.0.1', port: host.port, username: 'root', auth: { kind: 'password', password: 'pw-unit' } });
});

afterAll(async () => {
  await session.close();
  await host.stop();
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

describe('RemoteExecution phases', () => {
  /** A context on a raw ssh2 client of the same server, so a test sees the phase whenever the command calls out. */
  async function rawContext(onKill: (pid: number) => void): Promise<{ context: ExecContext; close(): void }> {
    const client = new Client();
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject).connect({ host: '127.0.0.1', port: host.port, username: 'root', password: 'pw-unit' });
    });
    const context: ExecContext = {
      client,
      endpoint: `127.0.0.1:${host.port}`,
      lost: () => null,
      onLost: () => () => undefined,
      killProcessGroup: async (pid) => {
        onKill(pid);
        await session.exec(['kill-helper', 'ccos-kill-group', String(pid)]);
      },
    };
    return { context, close: () => client.end() };
  }

  it('opening → running → killing (the group kill sent with the pid) → settled on a timeout', async () => {
    const seen: ExecPhase[] = [];
    const raw = await rawContext((pid) => {
      expect(pid).toBe(5151);
      seen.push(execution.phase);
    });
    const execution = new RemoteExecution(raw.context, displayCommand(['hang']), { timeoutMs: 50 });
    seen.push(execution.phase);
    const result = await execution.run(buildRemoteCommand(['hang']));
    seen.push(execution.phase);
    raw.close();
    expect(seen).toEqual(['opening', 'killing', 'settled']);
    expect(result).toMatchObject({ timedOut: true, pid: 5151, signal: 'TERM' });
  });

  it('is running while output arrives, and settles with the exit status', async () => {
    const seen = new Set<ExecPhase>();
    const raw = await rawContext(() => undefined);
    const execution: RemoteExecution = new RemoteExecution(raw.context, displayCommand(['report']), { onStdout: () => seen.add(execution.phase), onStderr: () => seen.add(execution.phase) });
    const result = await execution.run(buildRemoteCommand(['report']));
    raw.close();
    expect([...seen]).toEqual(['running']);
    expect(execution.phase).toBe('settled');
    expect(result).toMatchObject({ exitCode: 3, pid: 4242 });
  });

  it('settles at once, opening no channel, when aborted before it starts', async () => {
    const raw = await rawContext(() => undefined);
    const before = commands.length;
    const execution = new RemoteExecution(raw.context, displayCommand(['hang']), { signal: AbortSignal.abort() });
    const result = await execution.run(buildRemoteCommand(['hang']));
    raw.close();
    expect(execution.phase).toBe('settled');
    expect(result).toMatchObject({ aborted: true, exitCode: null, pid: null, durationMs: 0 });
    expect(commands.length).toBe(before);
  });
});

describe('PidLineFilter', () => {
  it('holds stderr back until the pid line is complete, then passes the rest without it', () => {
    const filter = new PidLineFilter();
    expect(filter.write(Buffer.from('stdin: is not a tty\nccos-exec-')).toString()).toBe('');
    expect(filter.waiting).toBe(true);
    expect(filter.write(Buffer.from('pid:4242\nwarning\n')).toString()).toBe('stdin: is not a tty\nwarning\n');
    expect(filter.pid).toBe(4242);
    expect(filter.waiting).toBe(false);
    expect(filter.write(Buffer.from('later\n')).toString()).toBe('later\n');
  });

  it('gives up after 4 KiB without the line and passes everything on, pid unknown', () => {
    const filter = new PidLineFilter();
    const noise = Buffer.from(`${'x'.repeat(5000)}\n`);
    expect(filter.write(noise)).toEqual(noise);
    expect(filter).toMatchObject({ waiting: false, pid: null });
  });

  it('hands back what it held when the command ends before the line was complete', () => {
    const filter = new PidLineFilter();
    filter.write(Buffer.from('ccos-exec-pi'));
    expect(filter.flush().toString()).toBe('ccos-exec-pi');
    expect(filter.waiting).toBe(false);
  });
});

describe('killStep', () => {
  it.each([
    [4242, false, 'kill-group'],
    [4242, true, 'kill-group'],
    [null, true, 'await-pid'],
    [null, false, 'close-channel'],
  ] as const)('pid %s, pid line still awaited %s: %s', (pid, waiting, step) => {
    expect(killStep(pid, waiting)).toBe(step);
  });
});

