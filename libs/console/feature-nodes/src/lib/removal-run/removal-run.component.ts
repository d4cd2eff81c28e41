import { ChangeDetectionStrategy, Component, computed, inject, input } from '@angular/core';
import type { RemovalEventView, RemovalRunView } from '@ccos/console/data-access';
import { type RunEnding, type RunFact, RunLogRowDirective, RunViewComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import { removalMessages } from '../removal.messages';
import { optionFlags, phaseItems } from './phase-items';

/**
 * One removal run: its state and options, the phases as a stepper, the pods still in the
 * way (with the budget that holds them), and the run's log. Shows what it is given.
 */
@Component({
  selector: 'ccos-removal-run',
  imports: [ServerTextPipe, RunViewComponent, RunLogRowDirective],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styleUrl: './removal-run.component.css',
  template: `
    <ccos-run-view
      statusTestId="removal-status"
      [status]="run().status"
      [statusLabel]="t(statusKey())"
      [facts]="facts()"
      [ending]="ending()"
      [steps]="phases()"
      [logHeading]="t('log.heading')"
      [logEmpty]="t('log.empty')"
      [logColumns]="logColumns()"
    >
      @if (run().status === 'RUNNING' && run().blocker) {
        <p class="blocker" role="status" data-testid="removal-blocker">{{ t('run.blocker', { blocker: i18n.server(run().blockerCode, run().blockerParams, run().blocker) }) }}</p>
      }
      @if (run().forceDrain; as force) {
        <p class="host-skipped" data-testid="removal-force-drain">{{ t('run.forceDrain', { actor: force.actor, reason: force.reason }) }}</p>
      }
      @if (run().hostSkip; as skip) {
        <p class="host-skipped" data-testid="removal-host-skipped">{{ t('run.hostSkipped', { actor: skip.actor, reason: skip.reason }) }}</p>
      }
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
      <ng-container *ccosRunLogRow="let event of events()">
        <td class="num">{{ event.seq }}<span class="time">{{ i18n.formatTime(event.occurredAt) }}</span></td>
        <td class="kind">{{ kindLabel(event) }}</td>
        <td class="mono">{{ event.pod ?? '' }}@if (event.pdb) { <span class="pdb">PDB {{ event.pdb }}</span> }</td>
        <td class="message">{{ event.message | serverText: event.messageCode : event.messageParams }}</td>
      </ng-container>
    </ccos-run-view>
  `,
})
export class RemovalRunComponent {
  readonly run = input.required<RemovalRunView>();
  readonly events = input.required<readonly RemovalEventView[]>();

  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(removalMessages);
  protected readonly phases = computed(() => phaseItems(this.run(), this.events(), this.t, this.i18n));
  protected readonly facts = computed<readonly RunFact[]>(() => {
    const run = this.run();
    const flags = optionFlags(run.options);
    return [
      { text: this.t('run.startedBy', { user: run.requestedBy, time: this.i18n.formatDateTime(run.startedAt) }) },
      ...(flags ? [{ text: this.t('run.options', { options: flags }), code: true }] : []),
    ];
  });
  protected readonly ending = computed<RunEnding | null>(() => {
    const run = this.run();
    return run.reason && run.status !== 'RUNNING' ? { title: null, text: this.i18n.server(run.reasonCode, run.reasonParams, run.reason) } : null;
  });
  protected readonly logColumns = computed(() => ['#', this.t('log.kind'), this.t('log.pod'), this.t('preview.reason')]);

  protected statusKey(): `runStatus.${RemovalRunView['status']}` {
    return `runStatus.${this.run().status}`;
  }

  protected kindLabel(event: RemovalEventView): string {
    return this.t(`kind.${event.kind}`);
  }
}
