import { Directive, TemplateRef, inject, input } from '@angular/core';

/** What the run log needs of an event: its place in the run, and its kind where it has one (a removal's `POD_EVICTED` …). */
export interface RunLogEvent {
  readonly seq: number;
  readonly kind?: string;
}

export interface RunLogRowContext<E extends RunLogEvent> {
  readonly $implicit: E;
}

/**
 * The rows of a run's event log: the events, oldest first, and the cells of one row.
 * Inside `<ccos-run-view>`:
 * `<ng-container *ccosRunLogRow="let event of events()"><td>{{ event.seq }}</td>…</ng-container>`.
 */
@Directive({ selector: '[ccosRunLogRow]' })
export class RunLogRowDirective<E extends RunLogEvent> {
  /** The events, oldest first (`of` in the microsyntax). */
  readonly ccosRunLogRowOf = input.required<readonly E[]>();
  readonly template = inject<TemplateRef<RunLogRowContext<E>>>(TemplateRef);

  static ngTemplateContextGuard<E extends RunLogEvent>(_row: RunLogRowDirective<E>, _context: unknown): _context is RunLogRowContext<E> {
    return true;
  }
}
