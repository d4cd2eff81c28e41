import { computed, inject, signal } from '@angular/core';
import { I18n } from '@ccos/console/util-i18n';
import { type ApiProblem, type Outcome, fieldProblems, problemsOf } from '../errors/api-problem';
import { fieldProblemText } from '../errors/error-reporter';

/** What one mutation gave back: its result (absent when it failed) and the error. */
export interface MutationAnswer<T> {
  readonly value: T | null | undefined;
  readonly error?: unknown;
}

/**
 * A form's round trip to the API: whether it is being sent, and the API's problems from the
 * last try, also keyed by input field (`input.vip` and `vip` both as `vip`) to show next to it.
 */
export class FormSubmission {
  private readonly sendingState = signal(false);
  private readonly problemsState = signal<readonly ApiProblem[]>([]);

  readonly sending = this.sendingState.asReadonly();
  readonly problems = this.problemsState.asReadonly();
  /** The I18n of the component that made this form, when it was made in an injection context (it always is in the console). */
  private readonly i18n = optionalI18n();
  readonly fieldErrors = computed(() => fieldProblems(this.problemsState(), this.i18n ? fieldProblemText(this.i18n) : undefined));

  clear(): void {
    this.problemsState.set([]);
  }

  async send<T>(mutate: () => Promise<MutationAnswer<T>>): Promise<Outcome<T>> {
    this.sendingState.set(true);
    this.problemsState.set([]);
    try {
      const { value, error } = await mutate();
      return value ? { ok: true, value } : this.failed(problemsOf(error));
    } catch (error) {
      return this.failed(problemsOf(error));
    } finally {
      this.sendingState.set(false);
    }
  }

  private failed<T>(problems: readonly ApiProblem[]): Outcome<T> {
    this.problemsState.set(problems);
    return { ok: false, problems };
  }
}

function optionalI18n(): I18n | null {
  try {
    return inject(I18n);
  } catch {
    // Made outside an injection context (a unit test): the API's own words are shown.
    return null;
  }
}
