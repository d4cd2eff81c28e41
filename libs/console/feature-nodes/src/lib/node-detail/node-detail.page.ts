import { ChangeDetectionStrategy, Component, type WritableSignal, computed, effect, inject, input, signal, untracked } from '@angular/core';
import { Router, RouterLink } from '@angular/router';
import { ClusterDetailStore, ErrorReporter, type InstallRunView, NodeCertificatesStore, NodeDetailStore, Notifications, type Outcome, RemovalProgressStore, Session } from '@ccos/console/data-access';
import { ButtonDirective, ConfirmDialogComponent, DataStateComponent, LiveIndicatorComponent, PageHeaderComponent, StatusBadgeComponent, type StatusTone, TextFieldComponent, runTone } from '@ccos/console/ui';
import { I18n, commonMessages, ServerTextPipe } from '@ccos/console/util-i18n';
import type { SshCredentialsInput } from '@ccos/shared/api-schema';
import { type HealthState, INSTALL_STEPS, type NodeOrigin, type RemediationRung, type NodeStatus, isHostVerdictKind, isInCluster, nextStepOf, removalCancellable } from '@ccos/shared/domain';
import { InstallRunComponent } from '../install-run/install-run.component';
import { stepTitle } from '../install-run/step-items';
import { NO_ACTIONS, hasAnyAction, nodeButtons } from '../node-actions';
import { healthTone, statusTone, waitsForCsrApproval } from '../node-status';
import { nodesMessages } from '../nodes.messages';
import { RemovalRunComponent } from '../removal-run/removal-run.component';
import { removalMessages } from '../removal.messages';
import { CredentialsDialogComponent } from './credentials-dialog.component';
import { HostKeyDialogComponent } from './host-key-dialog.component';
import { HostManifestCardComponent } from './host-manifest-card.component';

/** Actions confirmed in the plain confirmation dialog. */
type ConfirmedAction = InstallAction | RemovalAction;
type InstallAction = 'install' | 'retry' | 'cancel' | 'recopy' | 'delete';
type ChangeKey = Extract<keyof (typeof nodesMessages)['en'], `change.${string}`>;
type RemovalAction = 'cancelRemoval' | 'uncordon';

function isRemovalAction(action: ConfirmedAction): action is RemovalAction {
  return action === 'cancelRemoval' || action === 'uncordon';
}

function removalKey(action: RemovalAction): 'confirmCancel' | 'confirmUncordon' {
  return action === 'uncordon' ? 'confirmUncordon' : 'confirmCancel';
}

/**
 * One node: its status with the reason and what to do next, the host as the service found
 * it, the actions its status allows (安装节点, retry, cancel, re-copy the agent, new
 * credentials, trust a new host key, delete the record), the latest install run live
 * through `installProgress`, and earlier runs.
 */
@Component({
  selector: 'ccos-node-detail-page',
  imports: [ServerTextPipe, 
    RouterLink,
    TextFieldComponent,
    ButtonDirective,
    ConfirmDialogComponent,
    CredentialsDialogComponent,
    DataStateComponent,
    HostKeyDialogComponent,
    HostManifestCardComponent,
    InstallRunComponent,
    LiveIndicatorComponent,
    PageHeaderComponent,
    RemovalRunComponent,
    StatusBadgeComponent,
  ],
  providers: [NodeDetailStore, RemovalProgressStore, ClusterDetailStore, NodeCertificatesStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './node-detail.page.html',
  styleUrl: './node-detail.page.css',
})
export class NodeDetailPage {
  /** From the route (`/clusters/:clusterId/nodes/:nodeId`). */
  readonly clusterId = input.required<string>();
  readonly nodeId = input.required<string>();

  private readonly session = inject(Session);
  private readonly router = inject(Router);
  private readonly notifications = inject(Notifications);
  private readonly errors = inject(ErrorReporter);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(nodesMessages);
  protected readonly waitsForCsrApproval = waitsForCsrApproval;
  protected readonly isInCluster = isInCluster;
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(NodeDetailStore);
  protected readonly cluster = inject(ClusterDetailStore);
  protected readonly removal = inject(RemovalProgressStore);
  /** The client and serving certificates the node's kubelet holds, with their expiry. */
  protected readonly certificates = inject(NodeCertificatesStore);
  protected readonly r = this.i18n.translator(removalMessages);

  protected readonly confirming = signal<ConfirmedAction | null>(null);
  protected readonly editingCredentials = signal(false);
  /** Why the running removal goes on without its host, as typed. */
  protected readonly skipReason = signal('');
  protected readonly skipError = signal<string | null>(null);
  /** Why the running drain goes past the budgets, as typed (ADMIN). */
  protected readonly forceReason = signal('');
  protected readonly forceError = signal<string | null>(null);
  protected readonly isAdmin = computed(() => this.session.allows('ADMIN'));
  protected readonly acceptingHostKey = signal(false);
  /** Ticks while a run is going, for elapsed times (local clock only; the data is pushed). */
  protected readonly now = signal(Date.now());
  /** Set when this user deleted the record, so its disappearance is not reported as someone else's. */
  private deletedHere = false;

  protected readonly isOperator = computed(() => this.session.allows('OPERATOR'));
  protected readonly actions = computed(() => {
    const node = this.store.node();
    const run = this.removal.currentRun();
    const draining = run?.status === 'RUNNING' && removalCancellable(run.phase);
    return node ? nodeButtons(node.availableActions, this.session.user()?.role ?? null, draining) : NO_ACTIONS;
  });
  protected readonly anyAction = computed(() => hasAnyAction(this.actions()));
  /** The cluster's readiness checks its last check found failing: Install and Retry wait until they pass (the API refuses them too). */
  protected readonly clusterFailing = this.cluster.failingChecks;

  protected verdictLabel(verdict: string): string {
    return isHostVerdictKind(verdict) ? this.t(`verdict.${verdict}`) : verdict;
  }

  /** The operator's confirmation of the listed cleanup. */
  protected async cleanHost(): Promise<void> {
    await this.store.cleanHost();
  }

  /** Reads the host's facts again; what changed since shows under them. */
  protected async reinspect(): Promise<void> {
    await this.store.reinspectHost();
  }

  /** `Memory: 16 GiB → 8 GiB`, `Disk nvme0n1: — → nvme0n1 1024 GiB SSD`. */
  protected changeText(change: { readonly field: string; readonly item: string | null; readonly before: string | null; readonly after: string | null }): string {
    const field = this.t(`change.${change.field}` as ChangeKey);
    return this.t('facts.change', { field: change.item ? `${field} ${change.item}` : field, before: change.before ?? '—', after: change.after ?? '—' });
  }
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  protected readonly stepTitles = computed(() => INSTALL_STEPS.map((step) => stepTitle(step, this.i18n)));
  protected readonly hostKeyError = computed(() => this.store.fieldErrors()['fingerprint'] ?? null);

  constructor() {
    effect(() => {
      this.store.select(this.clusterId(), this.nodeId());
      this.removal.select(this.nodeId());
      this.cluster.select(this.clusterId());
    });
    effect(() => {
      const node = this.store.node();
      if (node && node.clusterId === this.clusterId()) {
        this.certificates.select(node.clusterId, node.hostname.toLowerCase());
      }
    });
    // A node link with another cluster's id would subscribe to the wrong cluster's changes.
    effect(() => {
      const node = this.store.node();
      if (node && node.id === this.nodeId() && node.clusterId !== this.clusterId()) {
        untracked(() => void this.router.navigate(['/clusters', node.clusterId, 'nodes', node.id], { replaceUrl: true }));
      }
    });
    effect((onCleanup) => {
      if (this.store.currentRun()?.status !== 'RUNNING') {
        return;
      }
      const timer = setInterval(() => this.now.set(Date.now()), 1000);
      onCleanup(() => clearInterval(timer));
    });
    effect(() => {
      if (!this.store.deleted()) {
        return;
      }
      untracked(() => {
        if (!this.deletedHere) {
          this.notifications.show('info', () => this.t('detail.deletedElsewhere'));
        }
        void this.router.navigate(['/clusters', this.clusterId(), 'nodes']);
      });
    });
  }

  protected statusLabel(status: NodeStatus): string {
    return this.t(`status.${status}`);
  }

  protected isText(value: string | null): value is string {
    return value !== null && value !== '';
  }

  protected healthLabel(state: HealthState): string {
    return this.t(`health.${state}`);
  }

  protected rungLabel(rung: RemediationRung): string {
    return this.t(`remediation.rung.${rung}`);
  }

  protected healthTone(state: HealthState): StatusTone {
    return healthTone(state);
  }

  protected tone(status: NodeStatus): StatusTone {
    return statusTone(status);
  }

  protected runTone(run: InstallRunView): StatusTone {
    return runTone(run.status);
  }

  protected runStatusLabel(run: InstallRunView): string {
    return this.t(`runStatus.${run.status}`);
  }

  /** What to do next, in the user's language; the API's English text when the console has none for the status. */
  /** The domain decides the step (as for the API's nextStep); the console words it with its buttons' names. */
  protected nextStep(node: { status: NodeStatus; origin: NodeOrigin; hostVerdict: { verdict: string; cleanedAt: string | null } | null }): string | null {
    const verdict = node.hostVerdict;
    const step = nextStepOf({ status: node.status, origin: node.origin, hostVerdict: verdict && isHostVerdictKind(verdict.verdict) ? { verdict: verdict.verdict, cleanedAt: verdict.cleanedAt } : null });
    return step ? this.t(`next.${step}`) : null;
  }

  protected confirmTitle(action: ConfirmedAction, hostname: string): string {
    return isRemovalAction(action) ? this.r(`${removalKey(action)}.title`, { hostname }) : this.t(`confirm.${action}.title`, { hostname });
  }

  protected confirmLabel(action: ConfirmedAction): string {
    return isRemovalAction(action) ? this.r(`${removalKey(action)}.action`) : this.t(`confirm.${action}.action`);
  }

  protected confirmBody(action: ConfirmedAction, hostname: string): string {
    return isRemovalAction(action) ? this.r(`${removalKey(action)}.body`, { hostname }) : this.t(`confirm.${action}.body`, { hostname });
  }

  protected isBusy(): boolean {
    return this.store.busy() !== null || this.removal.busy() !== null;
  }

  protected ask(action: ConfirmedAction): void {
    this.confirming.set(action);
  }

  protected closeConfirm(): void {
    this.confirming.set(null);
  }

  protected async runConfirmed(): Promise<void> {
    const action = this.confirming();
    const hostname = this.store.node()?.hostname ?? '';
    if (!action) {
      return;
    }
    if (action === 'delete') {
      this.deletedHere = true;
    }
    const outcome = await this.send(action);
    this.confirming.set(null);
    if (outcome) {
      this.notifications.show('success', () => (isRemovalAction(action) ? this.r(action === 'uncordon' ? 'done.uncordon' : 'done.cancel', { hostname }) : this.t(`done.${action}`, { hostname })));
    } else if (action === 'delete') {
      this.deletedHere = false;
    }
  }

  /** Whether the removal waits for a host that does not answer, and this user may have it go on without the host. */
  protected canSkipHost(run: { status: string; blockerCode?: string | null; hostSkip?: unknown }): boolean {
    return this.isOperator() && run.status === 'RUNNING' && !run.hostSkip && run.blockerCode === 'removal.blocker.hostUnreachable';
  }

  /** Whether PodDisruptionBudgets hold the running drain and this user may have it go past them. */
  protected canForceDrain(run: { status: string; phase: string; blockerCode?: string | null; forceDrain?: unknown }): boolean {
    return this.isAdmin() && run.status === 'RUNNING' && run.phase === 'DRAIN' && !run.forceDrain && run.blockerCode === 'removal.blocker.budget';
  }

  protected forceDrain(event: Event): Promise<void> {
    return this.decide(event, this.forceReason, this.forceError, (reason) => this.removal.forceDrain(reason), 'done.force');
  }

  protected skipHostSide(event: Event): Promise<void> {
    return this.decide(event, this.skipReason, this.skipError, (reason) => this.removal.skipHostSide(reason), 'done.skip');
  }

  /** Sends an operator's decision about the running removal with the reason typed; the API's refusal shows on the reason's field. */
  private async decide(event: Event, reason: WritableSignal<string>, error: WritableSignal<string | null>, send: (reason: string) => Promise<Outcome<unknown>>, done: 'done.force' | 'done.skip'): Promise<void> {
    event.preventDefault();
    const hostname = this.store.node()?.hostname ?? '';
    const outcome = await send(reason());
    if (outcome.ok) {
      error.set(null);
      reason.set('');
      this.notifications.show('success', () => this.r(done, { hostname }));
    } else {
      const problem = outcome.problems[0];
      error.set(problem ? this.errors.messageOf(problem) : null);
    }
  }

  protected openCredentials(): void {
    this.store.clearDialogProblems();
    this.editingCredentials.set(true);
  }

  protected async updateCredentials(input: SshCredentialsInput): Promise<void> {
    const hostname = this.store.node()?.hostname ?? '';
    const outcome = await this.store.updateCredentials(input);
    if (outcome.ok) {
      this.editingCredentials.set(false);
      this.notifications.show('success', () => this.t('done.credentials', { hostname }));
    }
  }

  protected openHostKey(): void {
    this.store.clearDialogProblems();
    this.acceptingHostKey.set(true);
  }

  protected async acceptHostKey(fingerprint: string): Promise<void> {
    const hostname = this.store.node()?.hostname ?? '';
    const outcome = await this.store.acceptHostKey(fingerprint);
    if (outcome.ok) {
      this.acceptingHostKey.set(false);
      this.notifications.show('success', () => this.t('done.acceptHostKey', { hostname }));
    }
  }

  protected loadRun(run: InstallRunView, event: Event): void {
    if ((event.target as HTMLDetailsElement).open) {
      void this.store.loadRun(run.id);
    }
  }

  private async send(action: ConfirmedAction): Promise<boolean> {
    switch (action) {
      case 'install':
        return (await this.store.install()).ok;
      case 'retry':
        return (await this.store.retry()).ok;
      case 'cancel':
        return (await this.store.cancel()).ok;
      case 'recopy':
        return (await this.store.recopyAgent()).ok;
      case 'delete':
        return (await this.store.deleteRecord()).ok;
      case 'cancelRemoval':
        return (await this.removal.cancel()).ok;
      case 'uncordon':
        return (await this.removal.uncordon()).ok;
    }
  }
}
