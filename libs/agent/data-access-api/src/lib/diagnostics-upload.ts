import { Backoff, EVENT_BACKOFF, type BackoffPolicy, type Clock, type Logger } from '@ccos/agent/util-host';
import type { ApiClient } from './api-client';
import { ApiError, isUnauthenticated } from './api-errors';

/** The most the service accepts for one diagnostics bundle. */
export const MAX_DIAGNOSTICS_BYTES = 8 * 1024 * 1024;

export type UploadOutcome = 'uploaded' | 'timeout' | 'unauthenticated' | 'refused' | 'cancelled';

/**
 * Uploads a diagnostics bundle, retrying like events (capped backoff with
 * jitter) until it is accepted, refused for good, or `timeoutMs` passes. The
 * service takes one bundle per run, from a failed run: 425 (the FAILED event
 * has not arrived yet) is retried, 409 (not a failed run, or a bundle is
 * stored already) is final.
 */
export async function uploadDiagnostics(
  archive: Uint8Array,
  deps: {
    readonly api: ApiClient;
    readonly clock: Clock;
    readonly log: Logger;
    readonly backoff?: BackoffPolicy;
    readonly random?: () => number;
    readonly timeoutMs: number;
    readonly signal?: AbortSignal;
  },
): Promise<UploadOutcome> {
  if (archive.length > MAX_DIAGNOSTICS_BYTES) {
    deps.log.error(`diagnostics bundle is ${archive.length} bytes, more than ${MAX_DIAGNOSTICS_BYTES}; not uploading`);
    return 'refused';
  }
  const backoff = new Backoff(deps.backoff ?? EVENT_BACKOFF, deps.random);
  const deadline = deps.clock.monotonic() + deps.timeoutMs;
  for (let attempt = 1; ; attempt += 1) {
    if (deps.signal?.aborted) {
      return 'cancelled';
    }
    try {
      await deps.api.uploadDiagnostics(archive, deps.signal);
      deps.log.info(`diagnostics uploaded (${archive.length} bytes, attempt ${attempt})`);
      return 'uploaded';
    } catch (error) {
      if (isUnauthenticated(error)) {
        deps.log.error(`diagnostics upload refused: the run token is no longer valid`);
        return 'unauthenticated';
      }
      if (error instanceof ApiError && error.code === 'HTTP_409') {
        // The run did not fail (it succeeded or was cancelled), or its bundle is stored already: final.
        deps.log.warn(`diagnostics not taken: ${error.message}`);
        return 'refused';
      }
      if (error instanceof ApiError && error.kind === 'rejected' && attempt >= 3) {
        deps.log.error(`diagnostics upload refused: ${error.message}`);
        return 'refused';
      }
      const delay = backoff.next();
      if (deps.clock.monotonic() + delay > deadline) {
        deps.log.error(`diagnostics not uploaded within ${Math.round(deps.timeoutMs / 1000)} s: ${(error as Error).message}`);
        return 'timeout';
      }
      deps.log.warn(`diagnostics upload failed (${(error as Error).message}); retrying in ${(delay / 1000).toFixed(1)} s`);
      await deps.clock.sleep(delay, deps.signal);
    }
  }
}
