import { TestBed } from '@angular/core/testing';
import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { I18n } from '@ccos/console/util-i18n';
import { formatMessage } from '@ccos/shared/messages';
import { Notifications } from '../notifications/notifications';
import { fieldProblems, problemsOf } from './api-problem';
import { ErrorReporter, fieldProblemText } from './error-reporter';

const refusal = (...errors: Array<{ message: string; extensions: Record<string, unknown> }>) => new CombinedGraphQLErrors({ errors });
const toasts = () => TestBed.inject(Notifications).items().map((item) => `${item.title()} | ${item.message()}`);

describe('a field’s problem, next to the field', () => {
  const tooLong = refusal({
    message: 'hostname: is 70 characters long; at most 63 are allowed',
    extensions: { code: 'BAD_USER_INPUT', field: 'input.hostname', problemCode: 'validation.hostnameTooLong', problemParams: { length: 70, max: 63 } },
  });

  it('says what is wrong without the field’s API name, in the user’s language', () => {
    const i18n = TestBed.inject(I18n);
    expect(fieldProblems(problemsOf(tooLong), fieldProblemText(i18n))).toEqual({ hostname: 'is 70 characters long; at most 63 are allowed' });
    i18n.setLanguage('zh');
    const chinese = fieldProblems(problemsOf(tooLong), fieldProblemText(i18n))['hostname'];
    expect(chinese).toBe(formatMessage('zh-CN', 'validation.hostnameTooLong', { length: 70, max: 63 }));
    expect(chinese).toMatch(/[\u4e00-\u9fff]/);
  });

  it('falls back to the API’s whole message for a problem without its own code', () => {
    const plain = refusal({ message: 'vip: not in the API server’s network', extensions: { code: 'BAD_USER_INPUT', field: 'input.vip' } });
    expect(fieldProblems(problemsOf(plain), fieldProblemText(TestBed.inject(I18n)))).toEqual({ vip: 'vip: not in the API server’s network' });
  });
});

describe('errors shown as toasts', () => {
  it('shows each problem under a translated title, once, leaving field problems to a form that shows them', () => {
    const reporter = TestBed.inject(ErrorReporter);
    const error = refusal(
      { message: 'cluster prod-east did not answer', extensions: { code: 'CLUSTER_UNREACHABLE' } },
      { message: 'hostname: must not be empty', extensions: { code: 'BAD_USER_INPUT', field: 'input.hostname' } },
    );
    reporter.reportApiError(error, 'fields');
    reporter.reportApiError(error, 'fields');
    expect(toasts()).toEqual(['Cluster unreachable | cluster prod-east did not answer']);
    // The same error reaching the ErrorHandler afterwards is not shown again.
    reporter.reportUnexpected(error);
    expect(toasts()).toHaveLength(1);
  });

  it('shows nothing for an operation whose caller shows its errors', () => {
    TestBed.inject(ErrorReporter).reportApiError(refusal({ message: 'wrong user name or password', extensions: { code: 'UNAUTHENTICATED' } }), 'caller');
    expect(toasts()).toEqual([]);
  });

  it('says how long to wait after too many sign-ins, in the user’s language, and follows a language switch', () => {
    const reporter = TestBed.inject(ErrorReporter);
    reporter.reportApiError(refusal({ message: 'too many', extensions: { code: 'LOGIN_THROTTLED', retryAfterSeconds: 30, scope: 'ADDRESS' } }), 'toast');
    expect(toasts()).toEqual(['Too many failed sign-ins | Too many failed sign-ins from your address. Try again in 30 s.']);
    TestBed.inject(I18n).setLanguage('zh');
    expect(toasts()[0]).not.toContain('Too many');
    expect(toasts()[0]).toContain('30');
  });

  it('tells a console that cannot download a page that the service is unreachable, and shows any other bug with its detail', () => {
    const reporter = TestBed.inject(ErrorReporter);
    reporter.reportUnexpected(new TypeError('Failed to fetch dynamically imported module: /chunk-X.js'));
    reporter.reportUnexpected(new Error('boom'));
    expect(toasts()).toEqual([
      'Cannot reach the installer service | Check the network connection and try again.',
      'Unexpected error in the console | Reload the page if something looks wrong. Details are in the browser console. (boom)',
    ]);
  });
});
