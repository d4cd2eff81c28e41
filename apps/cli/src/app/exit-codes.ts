/** The CLI's exit codes: stable, documented in the README, for scripts to branch on. */
export const EXIT = {
  ok: 0,
  /** The operation ran and failed: an install or removal that failed, a refusal by the API, an unreachable service. */
  failed: 1,
  /** Bad usage: unknown command or flag, a missing or malformed value. Nothing was sent. */
  usage: 2,
  /** Not signed in, a token refused or expired, a wrong password, or a role that may not do this. */
  auth: 3,
  /** The cluster, node or CSR named does not exist. */
  notFound: 4,
  /** `plan`: the inventory file would change something (0 when it would change nothing), for CI to branch on. */
  changes: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one line and ends with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
