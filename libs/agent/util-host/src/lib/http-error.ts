/**
 * A request that failed below HTTP: `code` is Node's (`ECONNREFUSED`,
 * `ETIMEDOUT`, `ECONNRESET`, `EHOSTUNREACH`, `ENOTFOUND`, a TLS code such as
 * `UNABLE_TO_VERIFY_LEAF_SIGNATURE`) or `ABORTED`.
 */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'HttpError';
  }
}
