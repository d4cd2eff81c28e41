import { ChangeDetectionStrategy, Component, computed, effect, inject, input, signal } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ClusterDetailStore, NodeBatchStore, Session } from '@ccos/console/data-access';
import { ButtonDirective, LiveIndicatorComponent, PageHeaderComponent, TextFieldComponent } from '@ccos/console/ui';
import { I18n, ServerTextPipe } from '@ccos/console/util-i18n';
import { type BatchPhase, type BatchState, type InstallStep, type NodeStatus, describeStep } from '@ccos/shared/domain';
import { batchesMessages } from '../batches.messages';
import { waitsForCsrApproval } from '../node-status';
import { nodesMessages } from '../nodes.messages';

/**
 * A batch (批次): the hosts of one bulk add, with aggregate progress kept live by the
 * `batchProgress` subscription (joined, installing by step, failed with reason, waiting for
 * an operator), and for operators: install, retry failed, cancel remaining.
 */
@Component({
  selector: 'ccos-batch-page',
  imports: [ServerTextPipe, RouterLink, ButtonDirective, LiveIndicatorComponent, PageHeaderComponent, TextFieldComponent],
  providers: [NodeBatchStore, ClusterDetailStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    .counts { display: flex; gap: 1rem; flex-wrap: wrap; list-style: none; padding: 0; }
    .counts li { min-width: 8rem; }
    .counts strong { font-size: 1.5rem; display: block; }
    table { width: 100%; border-collapse: collapse; }
    th, td { text-align: left; padding: 0.25rem 0.5rem; border-bottom: 1px solid var(--ccos-border, #ddd); vertical-align: top; }
    .actions { display: flex; gap: 0.5rem; flex-wrap: wrap; align-items: flex-end; }
  `,
  template: `
    <ccos-page-header [heading]="heading()" [description]="t('batch.description')" [backLink]="['/clusters', clusterId(), 'nodes']" [backLabel]="t('batch.back')">
      <ccos-live-indicator [live]="store.live()" [liveLabel]="t('batch.live.on')" [offlineLabel]="t('batch.live.off')" />
    </ccos-page-header>
    @if (store.batch(); as batch) {
      <section class="ccos-card" aria-labelledby="batch-progress">
        <h2 id="batch-progress" data-testid="batch-state" [attr.data-state]="batch.state">{{ stateLabel(batch.state) }}</h2>
        <ul class="counts" data-testid="batch-counts">
          <li data-count="joined"><strong>{{ batch.progress.joined }}</strong>{{ t('batch.count.joined') }}</li>
          <li data-count="installing"><strong>{{ batch.progress.installing }}</strong>{{ t('batch.count.installing') }}</li>
          @if (batch.progress.waitingForSlot > 0) {
            <li data-count="waiting-for-slot"><strong>{{ batch.progress.waitingForSlot }}</strong>{{ t('batch.count.waitingForSlot') }}</li>
          }
          <li data-count="queued"><strong>{{ batch.progress.queued }}</strong>{{ t('batch.count.queued') }}</li>
          <li data-count="failed"><strong>{{ batch.progress.failed }}</strong>{{ t('batch.count.failed') }}</li>
          <li data-count="waiting"><strong>{{ batch.progress.waitingForOperator }}</strong>{{ t('batch.count.waiting') }}</li>
          <li data-count="cancelled"><strong>{{ batch.progress.cancelled }}</strong>{{ t('batch.count.cancelled') }}</li>
          <li data-count="added"><strong>{{ batch.progress.added }}</strong>{{ t('batch.count.added') }}</li>
        </ul>
        @if (batch.progress.installingBySteps.length > 0) {
          <h3>{{ t('batch.bySteps') }}</h3>
          <ul>
            @for (entry of batch.progress.installingBySteps; track entry.step) {
              <li>{{ stepTitle(entry.step) }}: {{ entry.hosts }}</li>
            }
          </ul>
        }
        @if (batch.progress.failures.length > 0) {
          <h3>{{ t('batch.failures') }}</h3>
          <ul data-testid="batch-failures">
            @for (failure of batch.progress.failures; track failure.nodeId) {
              <li><a [routerLink]="['/clusters', clusterId(), 'nodes', failure.nodeId]">{{ failure.hostname }}</a>: {{ failureReason(failure.nodeId, failure.reason) }}</li>
            }
          </ul>
        }
        @if (canOperate()) {
          @if (batch.progress.added + batch.progress.failed > 0 && clusterFailing().length > 0) {
            <p class="next" data-testid="cluster-not-ready">
              {{ nodeText('next.CLUSTER_NOT_READY', { checks: clusterFailing().join(', ') }) }}
              <a [routerLink]="['/clusters', clusterId()]">{{ nodeText('next.openCluster') }}</a>
            </p>
          }
          <div class="actions">
            @if (batch.progress.added > 0) {
              <ccos-text-field name="concurrency" inputMode="numeric" [label]="t('batch.concurrency')" [(value)]="concurrency" />
              <button type="button" ccosButton="primary" [busy]="store.busy() === 'install'" [disabled]="clusterFailing().length > 0" (click)="installBatch()">{{ t('batch.install') }}</button>
            }
            @if (batch.progress.failed > 0) {
              <button type="button" ccosButton [busy]="store.busy() === 'retry'" [disabled]="clusterFailing().length > 0" (click)="retryFailed()">{{ t('batch.retry') }}</button>
            }
            @if (batch.progress.queued + batch.progress.added + batch.progress.waitingForOperator > 0) {
              <button type="button" ccosButton="danger" [busy]="store.busy() === 'cancel'" (click)="cancelRemaining()">{{ t('batch.cancel') }}</button>
            }
          </div>
        }
      </section>
      <section class="ccos-card">
        <table data-testid="batch-hosts">
          <thead>
            <tr><th>{{ t('batch.col.host') }}</th><th>{{ t('batch.col.phase') }}</th><th>{{ t('batch.col.status') }}</th><th>{{ t('batch.col.step') }}</th><th>{{ t('batch.col.reason') }}</th></tr>
          </thead>
          <tbody>
            @for (host of batch.hosts; track host.nodeId) {
              <tr [attr.data-host]="host.hostname" [attr.data-phase]="host.phase">
                <td><a [routerLink]="['/clusters', clusterId(), 'nodes', host.nodeId]">{{ host.hostname }}</a> <code>{{ host.ip }}</code></td>
                <td>{{ phaseLabel(host.phase) }}</td>
                <td data-testid="host-status" [attr.data-status]="host.status">{{ statusLabel(host.status) }}</td>
                <td>{{ host.step ? stepTitle(host.step) : '' }}</td>
                <td>
                  {{ host.statusReason | serverText: host.statusReasonCode : host.statusReasonParams }}
                  @if (waitsForCsrApproval(host)) {
                    <a data-testid="approve-csrs" [routerLink]="['/clusters', clusterId(), 'csrs']">{{ t('batch.approveCsrs') }}</a>
                  }
                </td>
              </tr>
            }
          </tbody>
        </table>
      </section>
    } @else {
      <p>{{ t('batch.loading') }}</p>
    }
  `,
})
export class BatchPage {
  /** From the route (`/clusters/:clusterId/nodes/batches/:batchId`). */
  readonly clusterId = input.required<string>();
  readonly batchId = input.required<string>();

  protected readonly store = inject(NodeBatchStore);
  protected readonly waitsForCsrApproval = waitsForCsrApproval;
  private readonly session = inject(Session);
  private readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(batchesMessages);
  protected readonly nodeText = this.i18n.translator(nodesMessages);
  private readonly cluster = inject(ClusterDetailStore);
  /** The cluster's readiness checks its last check found failing: installs wait until they pass (the API refuses them too). */
  protected readonly clusterFailing = this.cluster.failingChecks;
  protected readonly concurrency = signal('');
  protected readonly canOperate = computed(() => this.session.allows('OPERATOR'));
  protected readonly heading = computed(() => this.t('batch.heading', { count: this.store.batch()?.progress.total ?? 0 }));

  constructor() {
    effect(() => this.store.select(this.batchId()));
    effect(() => this.cluster.select(this.clusterId()));
  }

  /** A failed host's reason in the current language: its row carries the reason's message code. */
  protected failureReason(nodeId: string, fallback: string): string {
    const host = this.store.batch()?.hosts.find((entry) => entry.nodeId === nodeId);
    return host ? this.i18n.server(host.statusReasonCode, host.statusReasonParams, host.statusReason ?? fallback) : fallback;
  }

  protected stepTitle(step: string): string {
    const { title } = describeStep(step as InstallStep);
    return this.i18n.server(title.code, title.params, title.message);
  }

  protected stateLabel(state: string): string {
    return this.t(`batch.state.${state as BatchState}`);
  }

  /** A host's status by its label, as on the node pages (never the raw enum). */
  protected statusLabel(status: string): string {
    return this.nodeText(`status.${status as NodeStatus}`);
  }

  protected phaseLabel(phase: string): string {
    return this.t(`phase.${phase as BatchPhase}`);
  }

  protected async installBatch(): Promise<void> {
    const wanted = Number(this.concurrency());
    await this.store.install(this.concurrency().trim() !== '' && Number.isInteger(wanted) ? wanted : null);
  }

  protected async retryFailed(): Promise<void> {
    await this.store.retryFailed();
  }

  protected async cancelRemaining(): Promise<void> {
    await this.store.cancelRemaining();
  }
}
