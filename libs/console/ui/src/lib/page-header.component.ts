import { ChangeDetectionStrategy, Component, input } from '@angular/core';
import { RouterLink } from '@angular/router';

/** A page's heading (the page's one h1, focusable so navigation can move focus to it), with its actions on the right. */
@Component({
  selector: 'ccos-page-header',
  imports: [RouterLink],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: flex; flex-wrap: wrap; align-items: flex-end; justify-content: space-between; gap: 0.75rem 1.5rem; margin-bottom: 1.25rem; }
    .titles { display: flex; flex-direction: column; gap: 0.3rem; min-width: 0; }
    .back { font-size: 0.9rem; text-decoration: none; }
    .back:hover { text-decoration: underline; }
    h1 { overflow-wrap: anywhere; }
    h1:focus { outline: none; box-shadow: none; }
    .description { color: var(--ccos-text-muted); max-width: 48rem; }
    .actions { display: flex; flex-wrap: wrap; gap: 0.5rem; }
  `,
  template: `
    <div class="titles">
      @if (backLink() && backLabel()) {
        <a class="back" [routerLink]="backLink()">← {{ backLabel() }}</a>
      }
      <h1 tabindex="-1" data-page-heading>{{ heading() }}</h1>
      @if (description()) {
        <p class="description">{{ description() }}</p>
      }
    </div>
    <div class="actions"><ng-content /></div>
  `,
})
export class PageHeaderComponent {
  readonly heading = input.required<string>();
  readonly description = input('');
  readonly backLink = input<string | readonly string[] | null>(null);
  readonly backLabel = input('');
}
