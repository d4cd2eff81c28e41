import { randomBytes } from 'node:crypto';
import type { ExecOptions, ExecResult } from './remote-exec';
import { type RemoteScript, defineScript } from './remote-script';
import type { SshSession } from './ssh-session';

/** A code-owned script, its arguments, and how its result reads. */
export interface RemoteCheck<T> {
  readonly script: RemoteScript;
  readonly args: readonly string[];
  /** Reads the script's result as if it had run alone; throws what a failed check throws. */
  read(result: ExecResult, endpoint: string): T;
}

type CheckResults<T extends readonly RemoteCheck<unknown>[]> = { -readonly [K in keyof T]: T[K] extends RemoteCheck<infer R> ? R : never };

/**
 * Runs each script in turn with its own quoted arguments (`sh -c <text> <name> <args...>`, as
 * alone), one after another in one remote shell, and ends each one's stdout with
 * `\n<end marker> <exit code>\n`. Only references to positional parameters are ever eval'd,
 * never their values. Each script's stdin is /dev/null.
 */
const BATCH = defineScript('batch', [
  'end=$1; shift',
  'while [ $# -gt 0 ]; do',
  '  text=$1 name=$2 count=$3; shift 3',
  '  refs= i=1',
  '  while [ "$i" -le "$count" ]; do refs="$refs \\"\\${$i}\\""; i=$((i + 1)); done',
  '  eval "sh -c \\"\\$text\\" \\"\\$name\\" $refs" < /dev/null',
  '  code=$?',
  '  printf "\\n%s %s\\n" "$end" "$code"',
  '  shift "$count"',
  'done',
].join('\n'));

/** Room for every script's output: a batch's scripts print little, and none may lose its head to another's tail. */
const BATCH_TAIL_BYTES = 1024 * 1024;

/**
 * Runs several checks over one exec channel: one round trip and one remote shell instead of
 * one each, with each script given its own arguments and read as if it had run alone. The
 * scripts share the exec's options (sudo, timeout), its stderr and its end; a script that
 * never reported (the batch was killed or timed out) gets the batch's end with its output so far.
 */
export async function runChecks<T extends readonly RemoteCheck<unknown>[]>(session: SshSession, checks: T, options: ExecOptions = {}): Promise<CheckResults<T>> {
  const end = `@@ccos-check-end-${randomBytes(8).toString('hex')}`;
  const args = [end, ...checks.flatMap((check) => [check.script.text, `ccos-${check.script.name}`, String(check.args.length), ...check.args])];
  const batch = await session.runScript(BATCH, args, { tailBytes: BATCH_TAIL_BYTES, ...options });
  return splitBatch(batch, checks.length, end).map((result, index) => checks[index]?.read(result, session.endpoint)) as CheckResults<T>;
}

/** Each script's result out of the batch's: its stdout and exit code, the batch's everything else. */
export function splitBatch(batch: ExecResult, count: number, end: string): ExecResult[] {
  const results: ExecResult[] = [];
  let rest = batch.stdout;
  for (let index = 0; index < count; index += 1) {
    const at = rest.indexOf(`\n${end} `);
    const lineEnd = at < 0 ? -1 : rest.indexOf('\n', at + 1);
    if (at < 0 || lineEnd < 0) {
      results.push({ ...batch, stdout: rest, stdoutBytes: Buffer.byteLength(rest), exitCode: batch.exitCode === 0 ? null : batch.exitCode });
      rest = '';
      continue;
    }
    const stdout = rest.slice(0, at);
    results.push({ ...batch, stdout, stdoutBytes: Buffer.byteLength(stdout), exitCode: Number(rest.slice(at + end.length + 2, lineEnd)) });
    rest = rest.slice(lineEnd + 1);
  }
  return results;
}
