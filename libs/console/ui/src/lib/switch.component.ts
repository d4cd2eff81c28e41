import { ChangeDetectionStrategy, Component, booleanAttribute, input, output } from '@angular/core';

/**
 * An on/off switch (role="switch"). It does not flip itself: it asks, through
 * `toggleRequested`, so the owner can confirm first and then pass the new `checked`.
 */
@Component({
  selector: 'ccos-switch',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    button {
      display: inline-flex; align-items: center; gap: 0.6rem; padding: 0.25rem 0.25rem 0.25rem 0;
      background: none; border: 0; font: inherit; color: inherit; cursor: pointer; border-radius: var(--ccos-radius);
    }
    button:disabled { cursor: not-allowed; opacity: 0.6; }
    .track { position: relative; width: 2.6rem; height: 1.5rem; border-radius: 999px; background: var(--ccos-border-strong); transition: background 0.15s; flex: none; }
    .thumb { position: absolute; top: 0.15rem; left: 0.15rem; width: 1.2rem; height: 1.2rem; border-radius: 50%; background: #fff; box-shadow: var(--ccos-shadow); transition: transform 0.15s; }
    [aria-checked='true'] .track { background: var(--ccos-primary); }
    [aria-checked='true'] .thumb { transform: translateX(1.1rem); }
    @media (prefers-reduced-motion: reduce) { .track, .thumb { transition: none; } }
  `,
  template: `
    <button type="button" role="switch" [attr.aria-checked]="checked()" [disabled]="disabled()" (click)="toggleRequested.emit(!checked())">
      <span class="track" aria-hidden="true"><span class="thumb"></span></span>
      <span>{{ label() }}</span>
    </button>
  `,
})
export class SwitchComponent {
  readonly label = input.required<string>();
  readonly checked = input.required<boolean>();
  readonly disabled = input(false, { transform: booleanAttribute });
  /** The value the user asks for (the opposite of `checked`). */
  readonly toggleRequested = output<boolean>();
}
