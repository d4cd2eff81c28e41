import type { ApiErrorCode } from '@ccos/shared/domain';
import type { Message } from '@ccos/shared/messages';

/**
 * How a call to the installer service failed, which decides what the agent
 * does next:
 * - `transient`: the service or the link is down, busy or restarting — retry with backoff;
 * - `unauthenticated`: the run's token is invalid or expired, the run is over — stop;
 * - `finished`: the run has ended on the service's side (succeeded, failed or cancelled) and takes
 *   no more events — stop sending, nothing later would be taken either;
 * - `rejected`: the service understood and refused — retrying the same request will not help.
 */
export type ApiFailureKind = 'transient' | 'unauthenticated' | 'finished' | 'rejected';

export class ApiError extends Error {
  /** The message by its code in the catalogue, when the agent worded it itself (not the service's own words). */
  readonly coded: Message | null;

  constructor(
    readonly kind: ApiFailureKind,
    /** `extensions.code` of a GraphQL error, an HTTP status (`HTTP_503`) or a network code (`ECONNREFUSED`). */
    readonly code: string,
    message: string,
    options?: { cause?: unknown; coded?: Message },
  ) {
    super(message, options);
    this.name = 'ApiError';
    this.coded = options?.coded ?? null;
  }
}

export function isUnauthenticated(error: unknown): boolean {
  return error instanceof ApiError && error.kind === 'unauthenticated';
}

/** The run has ended on the service's side: no event of it will be taken any more. */
export function isRunFinished(error: unknown): boolean {
  return error instanceof ApiError && error.kind === 'finished';
}

export function isTransient(error: unknown): boolean {
  return error instanceof ApiError && error.kind === 'transient';
}

/** GraphQL `extensions.code` values worth retrying: the service is up but its backend (database, the cluster's API server) is not. */
const TRANSIENT_GRAPHQL_CODES: ReadonlySet<string> = new Set<ApiErrorCode>(['INTERNAL_SERVER_ERROR', 'UNAVAILABLE', 'CLUSTER_UNREACHABLE']);

/** Classifies a GraphQL error code. */
export function graphqlFailureKind(code: string): ApiFailureKind {
  if (code === 'UNAUTHENTICATED') {
    return 'unauthenticated';
  }
  if (code === 'RUN_FINISHED') {
    return 'finished';
  }
  return TRANSIENT_GRAPHQL_CODES.has(code) ? 'transient' : 'rejected';
}

/** Classifies an HTTP status that is not a success. */
export function httpFailureKind(status: number): ApiFailureKind {
  if (status === 401) {
    return 'unauthenticated';
  }
  if (status === 408 || status === 425 || status === 429 || status >= 500 || status === 0) {
    return 'transient';
  }
  return 'rejected';
}
