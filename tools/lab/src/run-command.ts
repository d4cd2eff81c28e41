import { spawn } from 'node:child_process';

/** What a finished command printed and how it ended. */
export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
  /** Exit code; `null` when a signal ended it. */
  readonly code: number | null;
}

/** Options for {@link runCommand}. */
export interface RunOptions {
  /** Written to the command's stdin, which is then closed. */
  readonly input?: string | Buffer;
  /** Resolve with the result instead of rejecting on a non-zero exit. */
  readonly allowFailure?: boolean;
  /** Kill the command (SIGKILL) after this long. */
  readonly timeoutMs?: number;
  /** The full environment of the command (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
}

/** A command that exited non-zero (or was killed), with what it printed. */
export class CommandError extends Error {
  constructor(
    readonly argv: readonly string[],
    readonly result: CommandResult,
  ) {
    const detail = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(-5).join('\n');
    super(`${argv.join(' ')} exited with ${result.code ?? 'a signal'}${detail ? `: ${detail}` : ''}`);
    this.name = 'CommandError';
  }
}

/**
 * Runs one command from an argument array (never through a shell) and
 * collects its output.
 */
export function runCommand(argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
  const [file, ...args] = argv;
  if (file === undefined) {
    return Promise.reject(new RangeError('runCommand needs a command'));
  }
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${file}: ${error.message}`, { cause: error }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const result = { stdout: Buffer.concat(stdout).toString(), stderr: Buffer.concat(stderr).toString(), code };
      if (code === 0 || options.allowFailure) {
        resolve(result);
      } else {
        reject(new CommandError(argv, result));
      }
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
