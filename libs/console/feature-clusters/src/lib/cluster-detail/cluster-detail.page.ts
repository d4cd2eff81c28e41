import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ClusterDetailStore, ErrorReporter, Notifications, Session } from '@ccos/console/data-access';
import { ButtonDirective, ConfirmDialogComponent, DataStateComponent, PageHeaderComponent, StatusBadgeComponent, SwitchComponent } from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import { describeStep } from '@ccos/shared/domain';
import { clustersMessages } from '../clusters.messages';
import { ApprovalsCardComponent } from './approvals-card.component';
import { HostMinimumsCardComponent } from './host-minimums-card.component';
import { RemediationCardComponent } from './remediation-card.component';
import { RolloutCardComponent } from './rollout-card.component';
import { WebhooksCardComponent } from './webhooks-card.component';

/** One cluster: how the service reaches it, and its certificate handling (auto-approve, ADMIN may change it). */
@Component({
  selector: 'ccos-cluster-detail-page',
  imports: [RouterLink, ButtonDirective, ConfirmDialogComponent, DataStateComponent, PageHeaderComponent, HostMinimumsCardComponent, RemediationCardComponent, RolloutCardComponent, ApprovalsCardComponent, WebhooksCardComponent, StatusBadgeComponent, SwitchComponent],
  providers: [ClusterDetailStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './cluster-detail.page.html',
  styleUrl: './cluster-detail.page.css',
})
export class ClusterDetailPage {
  /** From the route (`/clusters/:clusterId`). */
  readonly clusterId = input.required<string>();

  private readonly session = inject(Session);
  private readonly notifications = inject(Notifications);
  private readonly errors = inject(ErrorReporter);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(clustersMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(ClusterDetailStore);

  protected readonly canChangePolicy = computed(() => this.session.allows('ADMIN'));
  /** The auto-approve value waiting for confirmation, or null when no dialog is open. */
  protected readonly pendingAutoApprove = signal<boolean | null>(null);
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  protected readonly artifactProblem = computed(() => {
    const problem = this.store.artifactSetProblems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  protected readonly artifactSet = this.store.artifactSet;
  protected readonly checksProblem = computed(() => {
    const problem = this.store.checksProblems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  protected readonly ready = computed(() => this.store.checks()?.every((check) => check.ok) ?? false);
  protected readonly versionSourceLabel = computed(() => {
    const source = this.artifactSet()?.versionSource;
    return source === 'OVERRIDE' ? this.t('artifacts.source.OVERRIDE')
      : source === 'CLUSTER_VERSION' ? this.t('artifacts.source.CLUSTER_VERSION')
        : source === 'SERVER_VERSION' ? this.t('artifacts.source.SERVER_VERSION')
          : this.t('artifacts.source.UNKNOWN');
  });
  protected readonly setKindLabel = computed(() => {
    const kind = this.artifactSet()?.kind;
    return kind === 'IMPORTED' ? this.t('artifacts.kind.IMPORTED') : kind === 'DEFAULT' ? this.t('artifacts.kind.DEFAULT') : this.t('artifacts.kind.NONE');
  });
  /** Megabytes, in the reader's number format. */
  protected megabytes(bytes: number): string {
    return new Intl.NumberFormat(this.i18n.language() === 'zh' ? 'zh-CN' : 'en', { maximumFractionDigits: 1 }).format(bytes / 1024 / 1024);
  }
  /** The install step that waits for approved certificates, in the current language. */
  protected readonly kubeletStep = computed(() => this.i18n.server(describeStep('START_KUBELET').title.code, {}, describeStep('START_KUBELET').title.message));

  constructor() {
    effect(() => this.store.select(this.clusterId(), { checks: true }));
  }

  /** Renewals need no confirmation to turn on; turning them off lets certificates run out, so it says so. */
  protected async setRenewals(renewals: boolean): Promise<void> {
    const outcome = await this.store.setAutoApproveRenewals(renewals);
    if (outcome.ok) {
      const name = outcome.value.name;
      const on = outcome.value.autoApproveRenewals;
      this.notifications.show(on ? 'success' : 'info', () => (on ? this.t('renewals.changedOn', { name }) : this.t('renewals.changedOff', { name })));
    }
  }

  protected askToSetAutoApprove(enabled: boolean): void {
    this.pendingAutoApprove.set(enabled);
  }

  protected cancelAutoApproveChange(): void {
    this.pendingAutoApprove.set(null);
  }

  protected async setAutoApprove(): Promise<void> {
    const enabled = this.pendingAutoApprove();
    if (enabled === null) {
      return;
    }
    const outcome = await this.store.setCsrAutoApprove(enabled);
    this.pendingAutoApprove.set(null);
    if (outcome.ok) {
      const name = outcome.value.name;
      const enabledNow = outcome.value.csrAutoApprove;
      this.notifications.show('success', () => (enabledNow ? this.t('autoApprove.changedOn', { name }) : this.t('autoApprove.changedOff', { name })));
    }
  }
}
