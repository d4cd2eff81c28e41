/**
 * A shell script owned by this code base, run with `sh -c` and given its
 * values as positional parameters (`$1`, `$2`, ...), each quoted like any
 * argv element. User data never becomes script text, so a script is a
 * constant: define it once with {@link defineScript} at module level.
 */
export interface RemoteScript {
  /** Shown as `$0` and in logs. */
  readonly name: string;
  readonly text: string;
}

/** Declares a fixed remote script. */
export function defineScript(name: string, text: string): RemoteScript {
  if (!/^[a-z][a-z0-9-]*$/.test(name)) {
    throw new TypeError(`script name "${name}" must be kebab-case`);
  }
  return Object.freeze({ name, text });
}

/** The argv that runs `script` with `args`: `sh -c <text> <name> <args...>`. */
export function scriptArgv(script: RemoteScript, args: readonly string[] = []): string[] {
  return ['sh', '-c', script.text, `ccos-${script.name}`, ...args];
}
