import { ChangeDetectionStrategy, Component, booleanAttribute, input, output } from '@angular/core';
import { ButtonDirective } from './button.directive';
import { StatusBadgeComponent } from './status-badge.component';

/** One session as the list shows it: every text already in the user's language. */
export interface SessionRow {
  readonly id: string;
  readonly client: string;
  readonly address: string;
  readonly signedIn: string;
  readonly lastUsed: string;
  readonly current: boolean;
}

export interface SessionListLabels {
  readonly caption: string;
  readonly client: string;
  readonly address: string;
  readonly signedIn: string;
  readonly lastUsed: string;
  readonly actions: string;
  readonly current: string;
  readonly signOut: string;
  /** The sign-out button's accessible name for one row, e.g. "Sign out Chrome 131 · Linux from 10.0.0.5". */
  readonly signOutRow: (row: SessionRow) => string;
}

/** Sessions in a table, each with a sign-out button; the session of this browser is marked and has none. */
@Component({
  selector: 'ccos-session-list',
  imports: [ButtonDirective, StatusBadgeComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    .client { font-weight: 600; overflow-wrap: anywhere; margin-right: 0.5rem; }
    .address { font-family: var(--ccos-mono, monospace); }
  `,
  template: `
    <div class="ccos-table-wrap">
      <table class="ccos-table">
        <caption class="ccos-visually-hidden">{{ labels().caption }}</caption>
        <thead>
          <tr>
            <th scope="col">{{ labels().client }}</th>
            <th scope="col">{{ labels().address }}</th>
            <th scope="col">{{ labels().signedIn }}</th>
            <th scope="col">{{ labels().lastUsed }}</th>
            <th scope="col"><span class="ccos-visually-hidden">{{ labels().actions }}</span></th>
          </tr>
        </thead>
        <tbody>
          @for (row of sessions(); track row.id) {
            <tr [attr.data-session]="row.id" [attr.data-current]="row.current ? 'true' : null">
              <td>
                <span class="client">{{ row.client }}</span>
                @if (row.current) {
                  <ccos-status-badge tone="info">{{ labels().current }}</ccos-status-badge>
                }
              </td>
              <td class="address">{{ row.address }}</td>
              <td>{{ row.signedIn }}</td>
              <td>{{ row.lastUsed }}</td>
              <td>
                @if (!row.current) {
                  <button ccosButton type="button" [disabled]="busy()" [attr.aria-label]="labels().signOutRow(row)" (click)="signOutRequested.emit(row.id)">{{ labels().signOut }}</button>
                }
              </td>
            </tr>
          }
        </tbody>
      </table>
    </div>
  `,
})
export class SessionListComponent {
  readonly sessions = input.required<readonly SessionRow[]>();
  readonly labels = input.required<SessionListLabels>();
  readonly busy = input(false, { transform: booleanAttribute });
  readonly signOutRequested = output<string>();
}
