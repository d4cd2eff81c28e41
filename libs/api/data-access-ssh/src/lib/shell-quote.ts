/**
 * POSIX `sh` quoting for remote commands. SSH sends one command string that
 * the user's login shell parses, so every argument we pass must survive that
 * parse unchanged: each is wrapped in single quotes, inside which the shell
 * interprets nothing, and an embedded `'` becomes `'\''` (close, escaped
 * quote, reopen). NUL cannot be carried by a C string at all, so it is
 * refused rather than silently truncating the argument.
 *
 * @see https://pubs.opengroup.org/onlinepubs/9799919799/utilities/V3_chap02.html#tag_19_02_02
 */

/** Thrown for an argument that cannot be passed to a remote command (it names the position, never the value). */
export class ShellQuoteError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'ShellQuoteError';
  }
}

/** Quotes one argument for a POSIX shell: `it's` becomes `'it'\''s'`, the empty string `''`. */
export function quoteShellArg(value: string, position = 0): string {
  if (typeof value !== 'string') {
    throw new ShellQuoteError(`argument ${position} is a ${typeof value}, not a string`);
  }
  if (value.includes('\0')) {
    throw new ShellQuoteError(`argument ${position} contains a NUL byte, which a remote command cannot receive`);
  }
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Joins an argv into one shell command line, every element quoted. The
 * remote shell turns it back into exactly these arguments, so `$(...)`,
 * backticks, `;`, globs and newlines in user data stay inert.
 */
export function quoteCommand(argv: readonly string[]): string {
  if (argv.length === 0) {
    throw new ShellQuoteError('a remote command needs at least the program name');
  }
  if (argv[0] === '') {
    throw new ShellQuoteError('the program name (argument 0) is empty');
  }
  return argv.map((arg, index) => quoteShellArg(arg, index)).join(' ');
}
