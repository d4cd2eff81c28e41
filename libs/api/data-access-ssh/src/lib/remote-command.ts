import { quoteCommand, quoteShellArg, ShellQuoteError } from './shell-quote';

/** How a remote command runs. */
export interface RemoteCommandOptions {
  /** Prefix `sudo -n --` (never prompts; fails at once when sudo wants a password). */
  readonly sudo?: boolean;
  /** Environment for the command (names: letters, digits, `_`). Prefer this or stdin over argv for secrets: argv shows in `ps`. */
  readonly env?: Readonly<Record<string, string>>;
}

/** First line the wrapper writes to stderr: the remote process id, which is also its process group. */
export const PID_MARKER = 'ccos-exec-pid:';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The command line sent over SSH for `argv`: every element single-quoted,
 * optionally under `sudo -n` and `env`. It first reports `$$` on stderr (a
 * line that {@link takePidLine} removes again): sshd starts each command in a
 * new session, so that pid is the process group of everything the command
 * starts, and a timeout can kill the whole group. `exec` keeps that pid for
 * the command itself.
 */
export function buildRemoteCommand(argv: readonly string[], options: RemoteCommandOptions = {}): string {
  return `printf '${PID_MARKER}%s\\n' "$$" >&2; exec ${displayCommand(argv, options)}`;
}

/** The part of {@link buildRemoteCommand} that runs the user's argv, as shown in logs. */
export function displayCommand(argv: readonly string[], options: RemoteCommandOptions = {}): string {
  const command = quoteCommand(argv);
  const env = Object.entries(options.env ?? {});
  for (const [name] of env) {
    if (!ENV_NAME.test(name)) {
      throw new ShellQuoteError(`environment variable name "${name.slice(0, 32)}" is not a valid name`);
    }
  }
  if (env.length > 0 && (argv[0] ?? '').includes('=')) {
    throw new ShellQuoteError('a program name containing "=" cannot be run with env');
  }
  const envPart = env.length === 0 ? '' : `env ${env.map(([name, value], index) => quoteShellArg(`${name}=${value}`, -1 - index)).join(' ')} `;
  return `${options.sudo === true ? 'sudo -n -- ' : ''}${envPart}${command}`;
}

/** Stderr bytes searched for the pid line before giving up (a login shell's rc files may print first). */
const PID_SEARCH_BYTES = 4096;

/**
 * Takes the wrapper's pid line out of the start of stderr. Returns `pending`
 * until that line has arrived (at once, in practice), then the pid (null
 * when no such line came in the first 4 KiB) and stderr without the line.
 */
export function takePidLine(head: Buffer): { readonly pending: true } | { readonly pending: false; readonly pid: number | null; readonly rest: Buffer } {
  let lineStart = 0;
  while (lineStart < head.length && lineStart < PID_SEARCH_BYTES) {
    const newline = head.indexOf(0x0a, lineStart);
    if (newline < 0) {
      break;
    }
    const line = head.subarray(lineStart, newline);
    const match = new RegExp(`^${PID_MARKER}(\\d{1,10})$`).exec(line.toString('latin1'));
    if (match !== null) {
      return { pending: false, pid: Number(match[1]), rest: Buffer.concat([head.subarray(0, lineStart), head.subarray(newline + 1)]) };
    }
    lineStart = newline + 1;
  }
  return head.length < PID_SEARCH_BYTES ? { pending: true } : { pending: false, pid: null, rest: head };
}
