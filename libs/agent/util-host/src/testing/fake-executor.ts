import type { CommandResult, Executor, RunOptions } from '../lib/executor';

export type FakeReply = Partial<Omit<CommandResult, 'argv'>>;
type Matcher = readonly string[] | ((argv: readonly string[]) => boolean);
type Reply = FakeReply | ((argv: readonly string[], options: RunOptions) => FakeReply | Promise<FakeReply>);

/** A command that printed `stdout` and exited 0. */
export function ok(stdout = ''): FakeReply {
  return { exitCode: 0, stdout, output: stdout };
}

/** A command that printed `output` on stderr and exited with `exitCode`. */
export function failed(exitCode: number, output = ''): FakeReply {
  return { exitCode, stderr: output, output };
}

/**
 * Scripted commands: `on(['systemctl', 'is-active'], ok('active\n'))`
 * matches argv prefixes; the rule added last wins; anything unscripted is
 * "not found" (ENOENT), as on a host without that tool.
 */
export class FakeExecutor implements Executor {
  readonly calls: { readonly argv: readonly string[]; readonly options: RunOptions }[] = [];
  private readonly rules: { readonly matcher: Matcher; readonly reply: Reply }[] = [];

  on(matcher: Matcher, reply: Reply): this {
    this.rules.push({ matcher, reply });
    return this;
  }

  /** The argv of every call whose argv starts with `prefix`. */
  callsOf(...prefix: string[]): (readonly string[])[] {
    return this.calls.map((call) => call.argv).filter((argv) => prefix.every((word, index) => argv[index] === word));
  }

  async run(argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
    this.calls.push({ argv, options });
    const rule = [...this.rules].reverse().find(({ matcher }) =>
      typeof matcher === 'function' ? matcher(argv) : matcher.every((word, index) => argv[index] === word));
    const reply: FakeReply = rule === undefined
      ? { exitCode: null, error: 'ENOENT' }
      : typeof rule.reply === 'function' ? await rule.reply(argv, options) : rule.reply;
    const stdout = reply.stdout ?? '';
    const stderr = reply.stderr ?? '';
    return {
      argv,
      exitCode: reply.exitCode === undefined ? 0 : reply.exitCode,
      signal: reply.signal ?? null,
      stdout,
      stderr,
      output: reply.output ?? `${stdout}${stderr}`,
      durationMs: reply.durationMs ?? 1,
      ...(reply.error === undefined ? {} : { error: reply.error }),
    };
  }
}
