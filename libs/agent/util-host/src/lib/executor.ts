import { spawn } from 'node:child_process';
import { type CodedText, message } from '@ccos/shared/messages';

/** How to run one command. */
export interface RunOptions {
  /** Kill the command (SIGTERM, then SIGKILL 5 s later) after this long. */
  readonly timeoutMs?: number;
  /** Kill the command when this aborts; leave unset for commands that must not be interrupted (a package transaction). */
  readonly signal?: AbortSignal;
  /** Written to the command's stdin, which is then closed (stdin is empty otherwise). */
  readonly stdin?: string | Buffer;
  /** Extra environment variables on top of the agent's. */
  readonly env?: Readonly<Record<string, string>>;
}

/** What a command did. Never thrown: a failing command is a result. */
export interface CommandResult {
  readonly argv: readonly string[];
  /** The exit code; null when it was killed by a signal or never started. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout and stderr interleaved as they came (kept up to {@link MAX_CAPTURED_BYTES}, oldest dropped). */
  readonly output: string;
  readonly durationMs: number;
  /** Why it did not run or was stopped: `ENOENT` (no such command), `timeout`, `aborted`. */
  readonly error?: string;
}

/**
 * Runs host commands. Always an argv array, never a shell string: values
 * from the config or the network can never be interpreted by a shell.
 */
export interface Executor {
  run(argv: readonly string[], options?: RunOptions): Promise<CommandResult>;
}

/** Output kept per stream; a command's full output goes into diagnostics, so keep a lot, but bounded. */
export const MAX_CAPTURED_BYTES = 4 * 1024 * 1024;

/** Renders an argv for humans (messages, logs); never executed. */
export function formatCommand(argv: readonly string[]): string {
  return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** Whether a result is a clean exit 0. */
export function succeeded(result: CommandResult): boolean {
  return result.exitCode === 0 && result.error === undefined;
}

/** One line saying how a command ended, e.g. `exit code 1` or `not found (ENOENT)`. */
export function describeExit(result: CommandResult): string {
  return exitMessage(result).message;
}

/** {@link describeExit} as a coded message of the catalogue, for texts the operator reads in their language. */
export function exitMessage(result: CommandResult): CodedText {
  if (result.error === 'ENOENT') {
    return message('agent.exit.notFound', { command: result.argv[0] ?? 'command' });
  }
  if (result.error === 'timeout') {
    return message('agent.exit.timeout', { seconds: Math.round(result.durationMs / 1000) });
  }
  if (result.error === 'aborted') {
    return message('agent.exit.aborted');
  }
  if (result.error !== undefined) {
    return message('agent.exit.error', { error: result.error });
  }
  if (result.signal !== null) {
    return message('agent.exit.signal', { signal: result.signal });
  }
  return message('agent.exit.code', { code: String(result.exitCode) });
}

class BoundedText {
  private chunks: Buffer[] = [];
  private size = 0;

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > MAX_CAPTURED_BYTES && this.chunks.length > 1) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** {@link Executor} over `child_process.spawn` with `shell: false`. */
export class NodeExecutor implements Executor {
  constructor(private readonly baseEnv: NodeJS.ProcessEnv = process.env) {}

  run(argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
    const [command, ...args] = argv;
    const started = performance.now();
    const stdout = new BoundedText();
    const stderr = new BoundedText();
    const output = new BoundedText();
    return new Promise((resolve) => {
      let error: string | undefined;
      let settled = false;
      const child = spawn(command ?? '', args, {
        shell: false,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...this.baseEnv, LC_ALL: 'C', ...options.env },
      });
      const kill = (reason: string) => {
        if (error === undefined) {
          error = reason;
        }
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      };
      const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => kill('timeout'), options.timeoutMs);
      const onAbort = () => kill('aborted');
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.signal?.aborted) {
        onAbort();
      }
      child.stdout.on('data', (chunk: Buffer) => {
        stdout.add(chunk);
        output.add(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr.add(chunk);
        output.add(chunk);
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.stdin ?? undefined);
      const finish = (exitCode: number | null, signal: string | null) => {
        if (settled) {
          return;
        }
        settled = true;
        if (timer !== undefined) {
          clearTimeout(timer);
        }
        options.signal?.removeEventListener('abort', onAbort);
        resolve({
          argv: [...argv],
          exitCode,
          signal,
          stdout: stdout.text(),
          stderr: stderr.text(),
          output: output.text(),
          durationMs: Math.round(performance.now() - started),
          ...(error === undefined ? {} : { error }),
        });
      };
      child.on('error', (cause: NodeJS.ErrnoException) => {
        error = cause.code ?? cause.message;
        finish(null, null);
      });
      child.on('close', (code, signal) => finish(code, signal));
    });
  }
}
