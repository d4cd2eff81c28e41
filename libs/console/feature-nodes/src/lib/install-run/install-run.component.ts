import { ChangeDetectionStrategy, Component, booleanAttribute, computed, inject, input, signal } from '@angular/core';
import { DiagnosticsDownload, type InstallRunView, type StepEventView } from '@ccos/console/data-access';
import { ButtonDirective, StatusBadgeComponent, type StatusTone, StepListComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import type { InstallRunStatus, InstallStep } from '@ccos/shared/domain';
import { nodesMessages } from '../nodes.messages';
import { latestStepChange, runDuration, runLog } from './run-log';
import { stepItems, stepTitle } from './step-items';

const RUN_TONES: Readonly<Record<InstallRunStatus, StatusTone>> = { RUNNING: 'info', SUCCEEDED: 'ok', FAILED: 'error', CANCELLED: 'warn' };

/**
 * One install run: its state, the six steps as a vertical stepper, why it ended, the
 * diagnostics bundle of a failed run, and the agent's event log (progress updates folded
 * away unless asked for). Shows what it is given; the page keeps it live.
 */
@Component({
  selector: 'ccos-install-run',
  imports: [ServerTextPipe, ButtonDirective, StatusBadgeComponent, StepListComponent],
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
  protected readonly runTone = computed(() => RUN_TONES[this.run().status]);
  private readonly log = computed(() => runLog(this.events(), this.showProgressEvents()));
  protected readonly progressEventCount = computed(() => this.log().progressCount);
  /** Newest first, so the latest event is at the top of the log. */
  protected readonly shownEvents = computed(() => this.log().shown);
  /** The latest step change in words, for the polite live region. */
  protected readonly announcement = computed(() => latestStepChange(this.events(), this.t, this.i18n));
  protected readonly duration = computed(() => runDuration(this.run(), this.now(), this.i18n));

  protected stepName(step: InstallStep): string {
    return stepTitle(step, this.i18n);
  }

  protected runStatusLabel(): string {
    return this.t(`runStatus.${this.run().status}`);
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
