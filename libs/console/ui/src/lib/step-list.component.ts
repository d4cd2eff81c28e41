import { ChangeDetectionStrategy, Component, input } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ProgressBarComponent } from './progress-bar.component';

export type StepItemState = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

export interface StepItemLink {
  readonly label: string;
  readonly commands: readonly string[];
  readonly queryParams?: Readonly<Record<string, string>>;
}

/** One step as the list shows it; every text already in the user's language. */
export interface StepItem {
  readonly id: string;
  readonly title: string;
  readonly state: StepItemState;
  /** The state in words ("Running", "失败" …). */
  readonly stateLabel: string;
  /** 0–100 while running; null hides the bar. */
  readonly progress: number | null;
  readonly progressLabel: string;
  /** When it started and how long it took, in words. */
  readonly timing: string;
  readonly message: string | null;
  /** What to do about a failure. */
  readonly hint: string | null;
  readonly hintTitle: string;
  readonly links: readonly StepItemLink[];
}

/**
 * A vertical stepper: each step with its state, progress bar, timing and last message;
 * a failed step shows its hint. The running step is marked aria-current="step".
 */
@Component({
  selector: 'ccos-step-list',
  imports: [RouterLink, ProgressBarComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: block; }
    ol { list-style: none; margin: 0; padding: 0; }
    li { position: relative; display: grid; grid-template-columns: 1.75rem 1fr; gap: 0 0.75rem; padding-bottom: 1rem; }
    li:last-child { padding-bottom: 0; }
    li:not(:last-child)::before { content: ''; position: absolute; left: calc(0.875rem - 1px); top: 1.9rem; bottom: 0.15rem; width: 2px; background: var(--ccos-border); }
    li.succeeded:not(:last-child)::before, li.skipped:not(:last-child)::before { background: var(--ccos-ok); }
    .icon {
      display: grid; place-items: center; width: 1.75rem; height: 1.75rem; border-radius: 50%; font-size: 0.85rem; font-weight: 700;
      border: 2px solid var(--ccos-border-strong); background: var(--ccos-surface); color: var(--ccos-text-muted);
    }
    .succeeded .icon, .skipped .icon { border-color: var(--ccos-ok); background: var(--ccos-ok); color: #fff; }
    .skipped .icon { opacity: 0.55; }
    .running .icon { border-color: var(--ccos-primary); color: var(--ccos-primary); }
    .failed .icon { border-color: var(--ccos-danger); background: var(--ccos-danger); color: #fff; }
    .body { display: flex; flex-direction: column; gap: 0.3rem; min-width: 0; padding-top: 0.15rem; }
    .head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.25rem 0.75rem; }
    .title { font-weight: 600; }
    .pending .title, .skipped .title { color: var(--ccos-text-muted); }
    .state { font-size: 0.8rem; font-weight: 600; color: var(--ccos-text-muted); }
    .running .state { color: var(--ccos-primary); }
    .failed .state { color: var(--ccos-danger); }
    .succeeded .state { color: var(--ccos-ok); }
    .timing { font-size: 0.8rem; color: var(--ccos-text-muted); margin-left: auto; }
    .message { font-size: 0.875rem; overflow-wrap: anywhere; }
    .failed .message { color: #7a1a12; }
    .links { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; font-size: 0.875rem; }
    .hint { font-size: 0.875rem; padding: 0.5rem 0.75rem; border-radius: var(--ccos-radius); background: var(--ccos-warn-soft); border: 1px solid #f1d39c; }
    .hint strong { display: block; }
    .hint code { padding: 0 0.25rem; border-radius: 3px; background: rgb(0 0 0 / 6%); overflow-wrap: anywhere; }
    ccos-progress-bar { max-width: 28rem; }
    @keyframes spin { to { transform: rotate(360deg); } }
    .spinner { width: 0.85rem; height: 0.85rem; border-radius: 50%; border: 2px solid currentColor; border-right-color: transparent; animation: spin 0.8s linear infinite; }
    @media (prefers-reduced-motion: reduce) { .spinner { animation: none; } }
  `,
  template: `
    <ol>
      @for (item of steps(); track item.id; let index = $index) {
        <li [class]="item.state" [attr.aria-current]="item.state === 'running' ? 'step' : null" [attr.data-step]="item.id" [attr.data-state]="item.state">
          <span class="icon" aria-hidden="true">
            @switch (item.state) {
              @case ('succeeded') { ✓ }
              @case ('skipped') { ✓ }
              @case ('failed') { ✗ }
              @case ('running') { <span class="spinner"></span> }
              @default { {{ index + 1 }} }
            }
          </span>
          <div class="body">
            <div class="head">
              <span class="title">{{ item.title }}</span>
              <span class="state">{{ item.stateLabel }}</span>
              @if (item.timing) {
                <span class="timing">{{ item.timing }}</span>
              }
            </div>
            @if (item.progress !== null) {
              <ccos-progress-bar [value]="item.progress" [label]="item.progressLabel" [tone]="item.state === 'failed' ? 'error' : item.state === 'succeeded' ? 'ok' : 'info'" />
            }
            @if (item.message) {
              <p class="message">{{ item.message }}</p>
            }
            @if (item.links.length > 0) {
              <p class="links">
                @for (link of item.links; track link.label) {
                  <a [routerLink]="link.commands" [queryParams]="link.queryParams ?? null">{{ link.label }}</a>
                }
              </p>
            }
            @if (item.hint) {
              <div class="hint">
                <strong>{{ item.hintTitle }}</strong>
                @for (part of segments(item.hint); track $index) {
                  @if (part.code) {<code>{{ part.text }}</code>} @else {<span>{{ part.text }}</span>}
                }
              </div>
            }
          </div>
        </li>
      }
    </ol>
  `,
})
export class StepListComponent {
  readonly steps = input.required<readonly StepItem[]>();

  /** Hints quote commands in backticks (`swapoff -a`); those parts are shown as code. */
  protected segments(text: string): readonly { readonly code: boolean; readonly text: string }[] {
    return text.split('`').map((part, index) => ({ code: index % 2 === 1, text: part })).filter((part) => part.text !== '');
  }
}
