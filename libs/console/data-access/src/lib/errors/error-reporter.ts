import { Injectable, inject } from '@angular/core';
import { I18n } from '@ccos/console/util-i18n';
import { Notifications } from '../notifications/notifications';
import { type ApiProblem, type ProblemFormatter, problemsOf } from './api-problem';
import { errorMessages } from './errors.messages';

/**
 * Who shows an operation's errors:
 * - `toast` (default): the error link shows every problem as a toast;
 * - `fields`: the caller shows problems that name a field next to it, the rest are toasts;
 * - `caller`: the caller shows everything (the sign-in form).
 */
export type ErrorDisplay = 'toast' | 'fields' | 'caller';

declare module '@apollo/client' {
  interface DefaultContext {
    /** See {@link ErrorDisplay}. */
    readonly errorDisplay?: ErrorDisplay;
  }
}

/** How browsers report a lazy-loaded chunk that could not be fetched. */
const CHUNK_LOAD_FAILED = /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed/i;

/**
 * The one place that turns errors into toasts, used by the Apollo error link and the
 * ErrorHandler. It remembers what it has shown, so an API error that later reaches the
 * ErrorHandler (uncaught in a component) is not shown twice.
 */
@Injectable({ providedIn: 'root' })
export class ErrorReporter {
  private readonly notifications = inject(Notifications);
  private readonly i18n = inject(I18n);
  private readonly t = this.i18n.translator(errorMessages);
  private readonly reported = new WeakSet<object>();

  /** Shows the problems of a failed operation, except those the caller shows itself. */
  reportApiError(error: unknown, display: ErrorDisplay, problems: readonly ApiProblem[] = problemsOf(error)): void {
    if (typeof error === 'object' && error !== null) {
      this.reported.add(error);
    }
    if (display === 'caller') {
      return;
    }
    for (const problem of problems) {
      if (display === 'fields' && problem.field) {
        continue;
      }
      this.notifications.show('error', () => this.titleOf(problem), () => this.messageOf(problem));
    }
  }

  /** Anything else that escaped: a bug in the console, shown so it is not silently lost. */
  reportUnexpected(error: unknown): void {
    if (typeof error === 'object' && error !== null && this.reported.has(error)) {
      return;
    }
    const detail = error instanceof Error ? error.message : String(error);
    if (CHUNK_LOAD_FAILED.test(detail)) {
      // A lazy page could not be downloaded: the service that serves the console is unreachable.
      this.notifications.show('error', () => this.t('title.NETWORK'), () => this.t('message.NETWORK'));
      return;
    }
    this.notifications.show('error', () => this.t('title.unexpected'), () => `${this.t('message.unexpected')} (${detail})`);
  }

  titleOf(problem: ApiProblem): string {
    return this.t(`title.${problem.code}`);
  }

  /**
   * The API's message as it is; the console words the problems it detects itself, and those
   * it can say in the user's language from their code (sign-in throttling and its wait).
   */
  messageOf(problem: ApiProblem): string {
    const seconds = problem.retryAfterSeconds;
    if (problem.code === 'LOGIN_THROTTLED' && seconds !== undefined) {
      return this.t(problem.scope === 'ADDRESS' ? 'message.LOGIN_THROTTLED.ADDRESS' : 'message.LOGIN_THROTTLED.USER', { seconds });
    }
    if (problem.code === 'LOGIN_BUSY' && seconds !== undefined) {
      return this.t('message.LOGIN_BUSY', { seconds });
    }
    return problem.code === 'NETWORK' ? this.t('message.NETWORK') : this.i18n.server(problem.messageCode, problem.messageParams, problem.message);
  }
}

/**
 * A field's problem in the user's language: what is wrong with the field (the field's label is
 * beside it, so its API name is left out), else the API's whole message.
 */
export function fieldProblemText(i18n: I18n): ProblemFormatter {
  return (problem) =>
    problem.problemCode ? i18n.server(problem.problemCode, problem.problemParams, problem.message) : i18n.server(problem.messageCode, problem.messageParams, problem.message);
}
