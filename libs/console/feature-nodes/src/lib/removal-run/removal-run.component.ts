import { ChangeDetectionStrategy, Component, computed, inject, input } from '@angular/core';
import type { RemovalEventView, RemovalRunView } from '@ccos/console/data-access';
import { StatusBadgeComponent, type StatusTone, StepListComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import type { RemovalRunStatus } from '@ccos/shared/api-schema';
import { removalMessages } from '../removal.messages';
import { optionFlags, phaseItems } from './phase-items';

const RUN_TONES: Readonly<Record<RemovalRunStatus, StatusTone>> = { RUNNING: 'info', SUCCEEDED: 'ok', FAILED: 'error', CANCELLED: 'warn' };

/**
 * One removal run: its state and options, the phases as a stepper, the pods still in the
 * way (with the budget that holds them), and the run's log. Shows what it is given.
 */
@Component({
  selector: 'ccos-removal-run',
  imports: [ServerTextPipe, StatusBadgeComponent, StepListComponent],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styleUrl: './removal-run.component.css',
  template: `
    <div class="summary">
      <ccos-status-badge [tone]="tone()" data-testid="removal-status" [attr.data-status]="run().status">{{ t(statusKey()) }}</ccos-status-badge>
      <span>{{ t('run.startedBy', { user: run().requestedBy, time: i18n.formatDateTime(run().startedAt) }) }}</span>
      @if (flags()) {
        <span class="flags">{{ t('run.options', { options: flags() }) }}</span>
      }
    </div>
    @if (run().reason && run().status !== 'RUNNING') {
      <p class="ccos-alert" [class.ccos-alert--error]="run().status === 'FAILED'" [class.ccos-alert--info]="run().status !== 'FAILED'">{{ run().reason | serverText: run().reasonCode : run().reasonParams }}</p>
    }
    <ccos-step-list [steps]="phases()" />
    @if (run().blocking.length > 0) {
      <section class="blocking" [attr.aria-label]="t('run.blocking')">
        <h3>{{ t('run.blocking') }}</h3>
        <ul>
          @for (pod of run().blocking; track pod.pod) {
            <li><span class="mono">{{ pod.pod }}</span>@if (pod.pdb) { <span class="pdb">PDB {{ pod.pdb }}</span> } — {{ pod.message | serverText: pod.messageCode : pod.messageParams }}</li>
          }
        </ul>
      </section>
    }
    <section class="log-section" [attr.aria-label]="t('log.heading')">
      <h3>{{ t('log.heading') }}</h3>
      <div class="log" tabindex="0" [attr.aria-label]="t('log.heading')">
        @if (events().length === 0) {
          <p class="empty">{{ t('log.empty') }}</p>
        } @else {
          <table>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{{ t('log.kind') }}</th>
                <th scope="col">{{ t('log.pod') }}</th>
                <th scope="col">{{ t('preview.reason') }}</th>
              </tr>
            </thead>
            <tbody>
              @for (event of newestFirst(); track event.seq) {
                <tr [attr.data-kind]="event.kind">
                  <td class="num">{{ event.seq }}<span class="time">{{ i18n.formatTime(event.occurredAt) }}</span></td>
                  <td class="kind">{{ kindLabel(event) }}</td>
                  <td class="mono">{{ event.pod ?? '' }}@if (event.pdb) { <span class="pdb">PDB {{ event.pdb }}</span> }</td>
                  <td class="message">{{ event.message | serverText: event.messageCode : event.messageParams }}</td>
                </tr>
              }
            </tbody>
          </table>
        }
      </div>
    </section>
  `,
})
export class RemovalRunComponent {
  readonly run = input.required<RemovalRunView>();
  readonly events = input.required<readonly RemovalEventView[]>();

  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(removalMessages);
  protected readonly tone = computed(() => RUN_TONES[this.run().status]);
  protected readonly phases = computed(() => phaseItems(this.run(), this.events(), this.t, this.i18n));
  protected readonly flags = computed(() => optionFlags(this.run().options));
  protected readonly newestFirst = computed(() => [...this.events()].reverse());

  protected statusKey(): 'runStatus.RUNNING' | 'runStatus.SUCCEEDED' | 'runStatus.FAILED' | 'runStatus.CANCELLED' {
    return `runStatus.${this.run().status}`;
  }

  protected kindLabel(event: RemovalEventView): string {
    return this.t(`kind.${event.kind}`);
  }
}
