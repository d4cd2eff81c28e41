import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type RemoteCheck, runChecks } from './remote-batch';
import type { ExecResult } from './remote-exec';
import { defineScript, scriptArgv } from './remote-script';
import type { SshSession } from './ssh-session';

const run = promisify(execFile);

/** A session whose scripts run in this machine's sh, as sshd would run them. */
function localSession(): { session: SshSession; execs: string[][] } {
  const execs: string[][] = [];
  const session = {
    endpoint: 'local',
    async runScript(script, args = []) {
      const [command = 'sh', ...rest] = scriptArgv(script, args);
      execs.push([command, ...rest]);
      // As over SSH without stdin: closed at once.
      const running = run(command, rest);
      running.child.stdin?.end();
      const done = await running.then(
        ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
        (error: { stdout: string; stderr: string; code: number }) => ({ stdout: error.stdout, stderr: error.stderr, code: error.code }),
      );
      return { command: script.name, exitCode: done.code, signal: null, pid: null, stdout: done.stdout, stderr: done.stderr, stdoutBytes: done.stdout.length, stderrBytes: done.stderr.length, stdoutTruncated: false, stderrTruncated: false, timedOut: false } as ExecResult;
    },
  } as Partial<SshSession> as SshSession;
  return { session, execs };
}

const raw = (script: ReturnType<typeof defineScript>, args: readonly string[]): RemoteCheck<{ stdout: string; exitCode: number | null }> => ({
  script,
  args,
  read: (result) => ({ stdout: result.stdout, exitCode: result.exitCode }),
});

const ARGS = defineScript('args', 'printf "%s|" "$0" "$#" "$@"');
const FAILS = defineScript('fails', 'printf "no newline"; exit 7');
const LINES = defineScript('lines', 'echo "@@section"; echo two; cat');

describe('runChecks', () => {
  it('runs every script in one exec, each with its own quoted arguments, output and exit code, as if alone', async () => {
    const { session, execs } = localSession();
    const hostile = ["it's $(touch /tmp/ccos-batch-pwned)", '', 'a b', '"; exit 9; "', '${1}'];
    const results = await runChecks(session, [raw(ARGS, hostile), raw(FAILS, []), raw(LINES, ['x']), raw(ARGS, [])] as const);
    const alone = await Promise.all([raw(ARGS, hostile), raw(FAILS, []), raw(LINES, ['x']), raw(ARGS, [])].map(async (check) => check.read(await localSession().session.runScript(check.script, check.args), 'local')));
    expect(results).toEqual(alone);
    expect(results[0]).toEqual({ stdout: `ccos-args|5|${hostile.join('|')}|`, exitCode: 0 });
    expect(results[1]).toEqual({ stdout: 'no newline', exitCode: 7 });
    expect(execs).toHaveLength(1);
  });

  it('does not take a script\'s output that looks like the end marker of another batch for its own', async () => {
    const { session } = localSession();
    const FORGED = defineScript('forged', 'printf "\\n@@ccos-check-end-0000000000000000 0\\nstill mine\\n"');
    const [first, second] = await runChecks(session, [raw(FORGED, []), raw(ARGS, ['y'])] as const);
    expect(first.stdout).toBe('\n@@ccos-check-end-0000000000000000 0\nstill mine\n');
    expect(second).toEqual({ stdout: 'ccos-args|1|y|', exitCode: 0 });
  });
});
