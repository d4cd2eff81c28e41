/**
 * Every `extensions.code` the service sends on purpose, and what it means: the one list the API
 * raises from (`AppError` in app-errors.ts, the HTTP edge) and the console, the CLI and the
 * agent read. The GraphQL engine's own refusals of a document (GRAPHQL_PARSE_FAILED,
 * GRAPHQL_VALIDATION_FAILED, BAD_REQUEST) come on top; clients treat them as bad input.
 */
export const API_ERROR_CODES = {
  BAD_USER_INPUT: 'A field was wrong; `field` names it, `problemCode` says what is wrong with it.',
  CONFLICT: 'Something with the same name or address exists, or another request changed the target first.',
  NOT_FOUND: 'The target does not exist (any more); `kind` says what was looked for.',
  UNAUTHENTICATED: 'No valid session or token.',
  FORBIDDEN: 'The caller\u2019s role is not enough; `requiredRole` says which is.',
  FAILED_PRECONDITION: 'The request is valid, but the target is not in a state that allows it.',
  HOST_KEY_CHANGED: 'The host offered another SSH host key than the pinned one.',
  UNAVAILABLE: 'A backend of the service (its database, a host) did not answer; try again.',
  CLUSTER_UNREACHABLE: 'A cluster\u2019s API server did not answer (now, or recently: the service remembers it for a few seconds).',
  LIMIT_EXCEEDED: 'A per-run or per-request limit was reached (e.g. events per install run).',
  RUN_FINISHED: 'The install run has ended (succeeded, failed or cancelled): it takes no more events; its agent stops and does not send them again.',
  LOGIN_THROTTLED: 'Too many failed sign-ins for this user from this address (`scope` USER), or from this address at all (ADDRESS); `retryAfterSeconds` says when to try again.',
  LOGIN_BUSY: 'Too many sign-ins are being checked at once; `retryAfterSeconds` says when to try again.',
  HTTPS_REQUIRED: 'An agent token came over plain HTTP, which the service does not allow (AGENT_PLAIN_HTTP).',
  PAYLOAD_TOO_LARGE: 'The request body is over the service\u2019s limit.',
  INTERNAL_SERVER_ERROR: 'An unexpected error; `errorId` finds it in the service log.',
} as const;

export type ApiErrorCode = keyof typeof API_ERROR_CODES;

export function isApiErrorCode(code: unknown): code is ApiErrorCode {
  return typeof code === 'string' && Object.hasOwn(API_ERROR_CODES, code);
}
