/** A parsed command line. */
export type CliCommand =
  | { readonly command: 'start' | 'run'; readonly config: string }
  | { readonly command: 'stop'; readonly config: string; readonly graceSeconds: number }
  | { readonly command: 'version'; readonly json: boolean }
  | { readonly command: 'help' };

export const USAGE = `usage:
  boot-worker start --config FILE          start the agent in the background (prints "started pid N")
  boot-worker stop --config FILE [--grace SECONDS]
                                           stop it: SIGTERM, SIGKILL after the grace period (default 30)
  boot-worker run --config FILE            run the agent in the foreground
  boot-worker version [--json]             print the version
exit codes: 0 done, 1 a step failed, 2 bad usage or config, 3 already running,
            4 token refused, 5 cancelled by the operator, 6 events not delivered, 143 stopped`;

/** Parses argv (without node and script); an error is a sentence for stderr. */
export function parseCli(argv: readonly string[]): CliCommand | { readonly error: string } {
  const [command, ...rest] = argv;
  const options = new Map<string, string | true>();
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i] ?? '';
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (match === null) {
      return { error: `unexpected argument "${arg}"` };
    }
    const name = match[1] ?? '';
    if (match[2] !== undefined) {
      options.set(name, match[2]);
    } else if (['config', 'grace'].includes(name)) {
      const value = rest[i + 1];
      if (value === undefined) {
        return { error: `--${name} needs a value` };
      }
      options.set(name, value);
      i += 1;
    } else {
      options.set(name, true);
    }
  }
  const allowed: Record<string, readonly string[]> = {
    start: ['config'], run: ['config'], stop: ['config', 'grace'], version: ['json'], help: [],
  };
  if (command === undefined) {
    return { error: 'no command given' };
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    return { command: 'help' };
  }
  if (command === '--version') {
    return { command: 'version', json: false };
  }
  const known = allowed[command];
  if (known === undefined) {
    return { error: `unknown command "${command}"` };
  }
  const unknown = [...options.keys()].filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    return { error: `${command} does not take --${unknown.join(', --')}` };
  }
  if (command === 'version') {
    return { command: 'version', json: options.get('json') === true };
  }
  const config = options.get('config');
  if (typeof config !== 'string' || config === '') {
    return { error: `${command} needs --config FILE` };
  }
  if (command === 'stop') {
    const grace = options.get('grace');
    const graceSeconds = grace === undefined ? 30 : Number(grace);
    if (!Number.isFinite(graceSeconds) || graceSeconds < 0 || graceSeconds > 3600) {
      return { error: '--grace must be a number of seconds (0..3600)' };
    }
    return { command: 'stop', config, graceSeconds };
  }
  return { command: command as 'start' | 'run', config };
}
