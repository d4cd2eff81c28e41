import { ChangeDetectionStrategy, Component, input } from '@angular/core';

export interface CheckItem {
  /** Shown as the check's name (already translated). */
  readonly label: string;
  readonly passed: boolean;
  readonly detail: string;
}

/** A policy's checks: ✓ or ✗ with the name and what was found. The mark is repeated in words for screen readers. */
@Component({
  selector: 'ccos-check-list',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: block; }
    ul { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: auto minmax(8rem, max-content) 1fr; gap: 0.2rem 0.6rem; font-size: 0.875rem; }
    li { display: contents; }
    .mark { font-weight: 700; text-align: center; width: 1.1rem; }
    .passed .mark { color: var(--ccos-ok); }
    .failed .mark { color: var(--ccos-danger); }
    .failed .name { color: var(--ccos-danger); font-weight: 600; }
    .detail { color: var(--ccos-text-muted); overflow-wrap: anywhere; }
    @media (max-width: 600px) { ul { grid-template-columns: auto 1fr; } .detail { grid-column: 2; } }
  `,
  template: `
    <ul>
      @for (check of checks(); track $index) {
        <li [class.passed]="check.passed" [class.failed]="!check.passed">
          <span class="mark" aria-hidden="true">{{ check.passed ? '✓' : '✗' }}</span>
          <span class="name"><span class="ccos-visually-hidden">{{ check.passed ? passedLabel() : failedLabel() }}: </span>{{ check.label }}</span>
          <span class="detail">{{ check.detail }}</span>
        </li>
      }
    </ul>
  `,
})
export class CheckListComponent {
  readonly checks = input.required<readonly CheckItem[]>();
  readonly passedLabel = input.required<string>();
  readonly failedLabel = input.required<string>();
}
