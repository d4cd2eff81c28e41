import { CombinedGraphQLErrors, ServerError } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '@ccos/shared/domain';
import { fieldProblems, problemsOf } from './api-problem';

const graphQLErrors = (...errors: Array<{ message: string; extensions?: Record<string, unknown> }>) => new CombinedGraphQLErrors({ errors });

describe('what the console makes of a failed operation', () => {
  it('keeps the API code, the blamed field and when to try again', () => {
    const problems = problemsOf(graphQLErrors({ message: 'too many sign-ins', extensions: { code: 'LOGIN_THROTTLED', retryAfterSeconds: 30, scope: 'USER' } }, { message: 'bad ip', extensions: { code: 'BAD_USER_INPUT', field: 'input.ip' } }));
    expect(problems).toEqual([
      { code: 'LOGIN_THROTTLED', message: 'too many sign-ins', field: null, retryAfterSeconds: 30, scope: 'USER' },
      { code: 'BAD_USER_INPUT', message: 'bad ip', field: 'input.ip' },
    ]);
  });

  it('keeps every code of the shared list, so a cluster that does not answer is not an unknown problem', () => {
    for (const code of Object.keys(API_ERROR_CODES)) {
      expect(problemsOf(graphQLErrors({ message: 'x', extensions: { code } }))[0]?.code).toBe(code);
    }
  });

  it('treats a refused document as bad input and an unknown code as unknown', () => {
    expect(problemsOf(graphQLErrors({ message: 'x', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }))[0]?.code).toBe('BAD_USER_INPUT');
    expect(problemsOf(graphQLErrors({ message: 'x', extensions: { code: 'GRAPHQL_PARSE_FAILED' } }))[0]?.code).toBe('BAD_USER_INPUT');
    expect(problemsOf(graphQLErrors({ message: 'x', extensions: { code: 'SOMETHING_NEW' } }))[0]?.code).toBe('UNKNOWN');
  });

  it('tells an expired session from an unavailable service and from no network at all', () => {
    const response = (status: number) => new Response('', { status });
    expect(problemsOf(new ServerError('', { response: response(401), bodyText: '' }))[0]?.code).toBe('UNAUTHENTICATED');
    expect(problemsOf(new ServerError('', { response: response(503), bodyText: '' }))[0]?.code).toBe('UNAVAILABLE');
    expect(problemsOf(new TypeError('Failed to fetch'))[0]?.code).toBe('NETWORK');
    expect(problemsOf(new Error('Socket closed with event 4403 Forbidden'))[0]?.code).toBe('UNAUTHENTICATED');
  });

  it('keys field problems without the argument prefix, first message per field', () => {
    expect(fieldProblems([
      { code: 'BAD_USER_INPUT', message: 'first', field: 'input.vip' },
      { code: 'BAD_USER_INPUT', message: 'second', field: 'input.vip' },
      { code: 'BAD_USER_INPUT', message: 'timeout', field: 'options.timeoutSeconds' },
      { code: 'CONFLICT', message: 'no field', field: null },
    ])).toEqual({ vip: 'first', timeoutSeconds: 'timeout' });
  });
});
