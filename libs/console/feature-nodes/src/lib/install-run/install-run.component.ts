import { ChangeDetectionStrategy, Component, booleanAttribute, computed, inject, input, signal } from '@angular/core';
import { DiagnosticsDownload, type InstallRunView, type StepEventView } from '@ccos/console/data-access';
import { ButtonDirective, type RunEnding, type RunFact, RunLogRowDirective, RunViewComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import type { InstallStep } from '@ccos/shared/domain';
import { nodesMessages } from '../nodes.messages';
import { latestStepChange, runDuration, runLog } from './run-log';
import { stepItems, stepTitle } from './step-items';

/**
 * One install run: its state, the six steps as a vertical stepper, why it ended, the
 * diagnostics bundle of a failed run, and the agent's event log (progress updates folded
 * away unless asked for). Shows what it is given; the page keeps it live.
 */
@Component({
  selector: 'ccos-install-run',
  imports: [ServerTextPipe, ButtonDirective, RunViewComponent, RunLogRowDirective],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './install-run.component.html',
  styleUrl: './install-run.component.css',
})
export class InstallRunComponent {
  readonly run = input.required<InstallRunView>();
  readonly events = input.required<readonly StepEventView[]>();
  readonly clusterId = input.required<string>();
  /** Now, so a running step's elapsed time moves. */
  readonly now = input(Date.now());
  /** Diagnostics need the OPERATOR role. */
  readonly canDownload = input(false, { transform: booleanAttribute });
  /** Announce step changes to screen readers (only for the live run). */
  readonly announce = input(false, { transform: booleanAttribute });

  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(nodesMessages);
  protected readonly downloads = inject(DiagnosticsDownload);
  protected readonly showProgressEvents = signal(false);

  protected readonly steps = computed(() => stepItems(this.run(), this.events(), { t: this.t, i18n: this.i18n, clusterId: this.clusterId(), now: this.now() }));
  protected readonly facts = computed<readonly RunFact[]>(() => {
    const run = this.run();
    return [
      { text: this.t('run.startedBy', { user: run.requestedBy, time: this.i18n.formatDateTime(run.startedAt) }) },
      { text: this.t('run.duration', { duration: runDuration(run, this.now(), this.i18n) }) },
      ...(run.purpose === 'APPLY'
        ? [{ text: this.t('run.applied', { steps: (run.onlySteps ?? []).map((step) => this.stepName(step)).join(', ') }) }]
        : run.startStep !== 'PREFLIGHT' ? [{ text: this.t('run.resumedAt', { step: this.stepName(run.startStep) }) }] : []),
    ];
  });
  /** A failed step shows its own message in the stepper; say why only when no step carries it. */
  protected readonly ending = computed<RunEnding | null>(() => {
    const run = this.run();
    if (!run.reason || run.status === 'SUCCEEDED' || (run.failedStep !== null && run.status !== 'CANCELLED')) {
      return null;
    }
    return { title: run.status === 'CANCELLED' ? this.t('run.cancelled') : this.t('run.ended'), text: this.i18n.server(run.reasonCode, run.reasonParams, run.reason) };
  });
  protected readonly logColumns = computed(() => ['#', this.t('log.time'), this.t('log.step'), this.t('log.status'), this.t('log.message')]);
  private readonly log = computed(() => runLog(this.events(), this.showProgressEvents()));
  protected readonly progressEventCount = computed(() => this.log().progressCount);
  protected readonly shownEvents = computed(() => this.log().shown);
  /** The latest step change in words, for the polite live region. */
  protected readonly announcement = computed(() => latestStepChange(this.events(), this.t, this.i18n));

  protected statusKey(): `runStatus.${InstallRunView['status']}` {
    return `runStatus.${this.run().status}`;
  }

  protected stepName(step: InstallStep): string {
    return stepTitle(step, this.i18n);
  }

  protected eventStatusLabel(event: StepEventView): string {
    return this.t(`eventStatus.${event.status}`);
  }

  protected detailText(event: StepEventView): string {
    return JSON.stringify(event.detail, null, 2);
  }

  protected hasDetail(event: StepEventView): boolean {
    return event.detail !== null && Object.keys(event.detail).length > 0;
  }

  protected toggleProgressEvents(event: Event): void {
    this.showProgressEvents.set((event.target as HTMLInputElement).checked);
  }

  protected async downloadDiagnostics(): Promise<void> {
    const diagnostics = this.run().diagnostics;
    if (diagnostics) {
      await this.downloads.download(diagnostics.url, `diagnostics-${this.run().id}.tar.gz`);
    }
  }
}
