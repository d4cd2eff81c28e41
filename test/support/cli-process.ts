import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** The built `ccos-scaler` (`npx nx run cli:build`). */
export const CLI = resolve('dist/apps/cli/ccos-scaler.mjs');

/** What a finished process printed and how it ended. */
export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** The whole environment besides PATH (nothing else of the test's is passed on). */
  readonly env?: Record<string, string>;
  /** Written to standard input, which is then closed. */
  readonly input?: string;
  /** Each chunk of standard output as it comes (a watch printing live). */
  readonly onStdout?: (chunk: string) => void;
}

/** Runs a command to its end with only PATH and `env` in its environment. */
export function runProcess(command: string, args: readonly string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env: { PATH: process.env['PATH'] ?? '', ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      options.onStdout?.(chunk.toString());
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Runs the built CLI with `args`. */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<Run> {
  return runProcess(process.execPath, [CLI, ...args], options);
}
