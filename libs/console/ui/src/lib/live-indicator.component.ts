import { ChangeDetectionStrategy, Component, input } from '@angular/core';

/** Says whether a page receives live updates: a pulsing dot and "Live", or "Reconnecting…". */
@Component({
  selector: 'ccos-live-indicator',
  changeDetection: ChangeDetectionStrategy.OnPush,
  host: { role: 'status', '[class.live]': 'live()', '[attr.data-live]': 'live()' },
  styles: `
    :host { display: inline-flex; align-items: center; gap: 0.4rem; font-size: 0.8rem; color: var(--ccos-text-muted); white-space: nowrap; }
    .dot { width: 0.55rem; height: 0.55rem; border-radius: 50%; background: var(--ccos-warn); }
    :host(.live) .dot { background: var(--ccos-ok); animation: pulse 2s ease-in-out infinite; }
    @keyframes pulse { 50% { opacity: 0.35; } }
    @media (prefers-reduced-motion: reduce) { :host(.live) .dot { animation: none; } }
  `,
  template: `<span class="dot" aria-hidden="true"></span>{{ live() ? liveLabel() : offlineLabel() }}`,
})
export class LiveIndicatorComponent {
  readonly live = input.required<boolean>();
  readonly liveLabel = input.required<string>();
  readonly offlineLabel = input.required<string>();
}
