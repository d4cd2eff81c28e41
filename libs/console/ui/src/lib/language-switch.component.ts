import { ChangeDetectionStrategy, Component, input, output } from '@angular/core';

export interface LanguageOption {
  readonly code: string;
  /** The language's own name, e.g. "简体中文". */
  readonly name: string;
  /** Its BCP 47 tag, so screen readers pronounce the name right. */
  readonly tag: string;
}

/** A two-or-more-way toggle between languages, each named in its own language. */
@Component({
  selector: 'ccos-language-switch',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: inline-flex; border: 1px solid color-mix(in srgb, currentColor 35%, transparent); border-radius: var(--ccos-radius); overflow: hidden; }
    button { font: inherit; font-size: 0.85rem; padding: 0.3rem 0.65rem; border: 0; background: transparent; color: inherit; cursor: pointer; }
    button + button { border-left: 1px solid color-mix(in srgb, currentColor 35%, transparent); }
    button[aria-pressed='true'] { background: color-mix(in srgb, currentColor 16%, transparent); font-weight: 600; }
    button:hover { background: color-mix(in srgb, currentColor 10%, transparent); }
    button:focus-visible { box-shadow: inset 0 0 0 2px #9cc3f5; border-radius: 0; }
  `,
  host: { role: 'group', '[attr.aria-label]': 'label()' },
  template: `
    @for (language of languages(); track language.code) {
      <button type="button" [attr.lang]="language.tag" [attr.aria-pressed]="language.code === current()" (click)="languageChange.emit(language.code)">
        {{ language.name }}
      </button>
    }
  `,
})
export class LanguageSwitchComponent {
  readonly languages = input.required<readonly LanguageOption[]>();
  readonly current = input.required<string>();
  readonly label = input.required<string>();
  readonly languageChange = output<string>();
}
