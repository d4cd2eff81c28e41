import { CombinedGraphQLErrors, CombinedProtocolErrors, ServerError, ServerParseError } from '@apollo/client';
import { type ApiErrorCode, isApiErrorCode } from '@ccos/shared/domain';

/** The API's `extensions.code` values (the shared list), plus what the console itself can tell apart. */
export type ProblemCode =
  | ApiErrorCode
  /** The service could not be reached at all (no response). */
  | 'NETWORK'
  | 'UNKNOWN';

/** The GraphQL engine's refusals of a document, before any resolver: bad input, as far as the user is concerned. */
const REFUSED_DOCUMENT_CODES: ReadonlySet<unknown> = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_REQUEST']);

/** One thing that went wrong, as the console shows it. */
export interface ApiProblem {
  readonly code: ProblemCode;
  /** The API's own (English) message, shown as it is; empty for NETWORK, which the console words itself. */
  readonly message: string;
  /** The input field the API blamed, e.g. `input.vip`, when it named one. */
  readonly field: string | null;
  /** When the API says to try again (LOGIN_THROTTLED, LOGIN_BUSY), in seconds. */
  readonly retryAfterSeconds?: number;
  /** For LOGIN_THROTTLED: whether this user from this address (USER) or this address at all (ADDRESS) must wait. */
  readonly scope?: string;
  /** `message` by its code in the message catalogue (libs/shared/messages), when the API worded it. */
  readonly messageCode?: string;
  readonly messageParams?: unknown;
  /** For a field's problem: what is wrong with it, without the field's API name. */
  readonly problemCode?: string;
  readonly problemParams?: unknown;
}

/** Shows a problem in the user's language (from its code) or as the API worded it. */
export type ProblemFormatter = (problem: ApiProblem) => string;

/**
 * Turns whatever an Apollo operation failed with into problems. GraphQL errors keep their
 * code and field; transport failures become NETWORK or UNAVAILABLE.
 */
export function problemsOf(error: unknown): ApiProblem[] {
  if (CombinedGraphQLErrors.is(error)) {
    return error.errors.map((graphQLError) => {
      const code = graphQLError.extensions?.['code'];
      const field = graphQLError.extensions?.['field'];
      const retryAfterSeconds = graphQLError.extensions?.['retryAfterSeconds'];
      const scope = graphQLError.extensions?.['scope'];
      const messageCode = graphQLError.extensions?.['messageCode'];
      const problemCode = graphQLError.extensions?.['problemCode'];
      return {
        code: isApiErrorCode(code) ? code : REFUSED_DOCUMENT_CODES.has(code) ? 'BAD_USER_INPUT' : 'UNKNOWN',
        message: graphQLError.message,
        field: typeof field === 'string' ? field : null,
        ...(typeof retryAfterSeconds === 'number' ? { retryAfterSeconds } : {}),
        ...(typeof scope === 'string' ? { scope } : {}),
        ...(typeof messageCode === 'string' ? { messageCode, messageParams: graphQLError.extensions?.['messageParams'] } : {}),
        ...(typeof problemCode === 'string' ? { problemCode, problemParams: graphQLError.extensions?.['problemParams'] } : {}),
      };
    });
  }
  if (ServerError.is(error)) {
    const code: ProblemCode = error.statusCode === 401 ? 'UNAUTHENTICATED' : error.statusCode >= 500 ? 'UNAVAILABLE' : 'UNKNOWN';
    return [{ code, message: `HTTP ${error.statusCode}`, field: null }];
  }
  if (ServerParseError.is(error)) {
    return [{ code: 'UNAVAILABLE', message: `HTTP ${error.statusCode}: the response was not GraphQL`, field: null }];
  }
  if (CombinedProtocolErrors.is(error)) {
    return [{ code: 'NETWORK', message: error.message, field: null }];
  }
  const message = error instanceof Error ? error.message : String(error);
  // graphql-ws closes with 4403 when the server refuses the connection_init token.
  if (/^Socket closed with event 4403\b/.test(message)) {
    return [{ code: 'UNAUTHENTICATED', message, field: null }];
  }
  if (error instanceof TypeError || /^Socket closed\b/.test(message)) {
    return [{ code: 'NETWORK', message: '', field: null }];
  }
  return [{ code: 'UNKNOWN', message, field: null }];
}

/**
 * Problems that name a field, keyed by the field without the argument prefix
 * (`input.vip`, `options.timeoutSeconds` and `vip` become `vip` and `timeoutSeconds`), first message per field.
 */
export function fieldProblems(problems: readonly ApiProblem[], format: ProblemFormatter = (problem) => problem.message): Readonly<Partial<Record<string, string>>> {
  const byField: Partial<Record<string, string>> = {};
  for (const problem of problems) {
    if (problem.field) {
      const key = problem.field.replace(/^(input|options)\./, '');
      byField[key] ??= format(problem);
    }
  }
  return byField;
}

/** The outcome of a user-triggered operation: the caller shows why it failed, so it gets the problems, not an exception. */
export type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problems: readonly ApiProblem[] };
