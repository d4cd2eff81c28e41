import { NgTemplateOutlet } from '@angular/common';
import { ChangeDetectionStrategy, Component, computed, contentChild, input } from '@angular/core';
import { StatusBadgeComponent, type StatusTone } from '../status-badge.component';
import { type StepItem, StepListComponent } from '../step-list.component';
import { type RunLogEvent, RunLogRowDirective } from './run-log-row.directive';

/** Where a run stands; install and removal runs share these. */
export type RunState = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

const RUN_TONES: Readonly<Record<RunState, StatusTone>> = { RUNNING: 'info', SUCCEEDED: 'ok', FAILED: 'error', CANCELLED: 'warn' };

/** The colour of a run's status badge. */
export function runTone(state: RunState): StatusTone {
  return RUN_TONES[state];
}

/** One fact beside the status (who started it, how long it took, its options …), in the user's language. */
export interface RunFact {
  readonly text: string;
  /** Shown as code (command-line flags). */
  readonly code?: boolean;
}

/** Why a run ended, when the steps do not say it. */
export interface RunEnding {
  readonly title: string | null;
  readonly text: string;
}

/**
 * A run with an ordered event log, as install and removal runs are shown: the status and
 * facts, why it ended, its steps (or phases) as a stepper, and the log, newest first (one
 * row per event, drawn by the {@link RunLogRowDirective} template). Content marked
 * `runNotice` goes above the ending, `runLogTools` beside the log's heading, the rest
 * between the stepper and the log. Every text arrives in the user's language.
 */
@Component({
  selector: 'ccos-run-view',
  imports: [NgTemplateOutlet, StatusBadgeComponent, StepListComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: flex; flex-direction: column; gap: 1rem; }
    .summary { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem 1rem; font-size: 0.875rem; color: var(--ccos-text-muted); }
    .code { font-family: var(--ccos-mono); font-size: 0.8rem; }
    .ended { overflow-wrap: anywhere; }
    .log-section { display: flex; flex-direction: column; gap: 0.4rem; margin-top: 0.25rem; }
    .log-head { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem; }
    .log-head h3 { font-size: 1rem; }
    .empty { padding: 0.75rem; color: var(--ccos-text-muted); }
  `,
  template: `
    <div class="summary">
      <ccos-status-badge [tone]="tone()" [attr.data-testid]="statusTestId()" [attr.data-status]="status()">{{ statusLabel() }}</ccos-status-badge>
      @for (fact of facts(); track $index) {
        <span [class.code]="fact.code">{{ fact.text }}</span>
      }
    </div>
    <ng-content select="[runNotice]" />
    @if (ending(); as ending) {
      <p class="ccos-alert" [class.ccos-alert--error]="status() === 'FAILED'" [class.ccos-alert--info]="status() !== 'FAILED'">
        @if (ending.title) {
          <strong>{{ ending.title }}</strong>
        }
        <span class="ended">{{ ending.text }}</span>
      </p>
    }
    <ccos-step-list [steps]="steps()" />
    @if (announcement() !== null) {
      <p class="ccos-visually-hidden" aria-live="polite">{{ announcement() }}</p>
    }
    <ng-content />
    <section class="log-section" [attr.aria-label]="logHeading()">
      <div class="log-head">
        <h3>{{ logHeading() }}</h3>
        <ng-content select="[runLogTools]" />
      </div>
      <div class="ccos-log" tabindex="0" [attr.aria-label]="logHeading()">
        @if (newestFirst().length === 0) {
          <p class="empty">{{ logEmpty() }}</p>
        } @else {
          <table>
            <thead>
              <tr>
                @for (column of logColumns(); track $index) {
                  <th scope="col">{{ column }}</th>
                }
              </tr>
            </thead>
            <tbody>
              @for (event of newestFirst(); track event.seq) {
                <tr [attr.data-seq]="event.seq" [attr.data-kind]="event.kind ?? null">
                  <ng-container *ngTemplateOutlet="row().template; context: { $implicit: event }" />
                </tr>
              }
            </tbody>
          </table>
        }
      </div>
    </section>
  `,
})
export class RunViewComponent {
  readonly status = input.required<RunState>();
  readonly statusLabel = input.required<string>();
  /** The badge's data-testid (`run-status`, `removal-status`), which tests and scripts wait on. */
  readonly statusTestId = input.required<string>();
  readonly facts = input<readonly RunFact[]>([]);
  readonly ending = input<RunEnding | null>(null);
  readonly steps = input.required<readonly StepItem[]>();
  /** The latest change in words for a polite live region; null: no live region (a run that is not followed live). */
  readonly announcement = input<string | null>(null);
  readonly logHeading = input.required<string>();
  readonly logEmpty = input.required<string>();
  readonly logColumns = input.required<readonly string[]>();

  protected readonly row = contentChild.required<RunLogRowDirective<RunLogEvent>>(RunLogRowDirective);
  protected readonly tone = computed(() => runTone(this.status()));
  protected readonly newestFirst = computed(() => [...this.row().ccosRunLogRowOf()].reverse());
}
