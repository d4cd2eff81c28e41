import { ChangeDetectionStrategy, Component, computed, effect, inject, input } from '@angular/core';
import { Router, RouterLink } from '@angular/router';
import { ClusterDetailStore, ErrorReporter, NodeCertificatesStore, type NodeSummary, NodeListStore, Session } from '@ccos/console/data-access';
import { ButtonDirective, DataStateComponent, LiveIndicatorComponent, PageHeaderComponent, StatusBadgeComponent, VirtualRowsDirective } from '@ccos/console/ui';
import { I18n, commonMessages, ServerTextPipe } from '@ccos/console/util-i18n';
import { NODE_STATUSES, type NodeStatus, isInCluster } from '@ccos/shared/domain';
import { batchesMessages } from '../batches.messages';
import { HOST_FILTERS, type HostFilter, STATUS_FAMILIES, type StatusFamily, type StatusFilter, isStatusFilter, matchesFilter, statusCounts, statusFamily, statusTone, waitsForCsrApproval } from '../node-status';
import { nodesMessages } from '../nodes.messages';

/**
 * The nodes of one cluster, live through `nodeChanged`: added here or found in the cluster,
 * with their status and why. OPERATOR adds hosts from here (录入节点). The status filter is
 * in the URL (`?status=attention`), so a filtered view can be shared.
 */
@Component({
  selector: 'ccos-node-list-page',
  imports: [ServerTextPipe, RouterLink, ButtonDirective, DataStateComponent, LiveIndicatorComponent, PageHeaderComponent, StatusBadgeComponent, VirtualRowsDirective],
  providers: [NodeListStore, ClusterDetailStore, NodeCertificatesStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './node-list.page.html',
  styleUrl: './node-list.page.css',
})
export class NodeListPage {
  /** From the route (`/clusters/:clusterId/nodes`). */
  readonly clusterId = input.required<string>();
  /** `?status=` — a family (attention, progress …) or one status. */
  readonly status = input<string | undefined>();

  private readonly session = inject(Session);
  private readonly errors = inject(ErrorReporter);
  private readonly router = inject(Router);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(nodesMessages);
  protected readonly tb = this.i18n.translator(batchesMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(NodeListStore);
  protected readonly waitsForCsrApproval = waitsForCsrApproval;
  protected readonly isInCluster = isInCluster;
  protected readonly cluster = inject(ClusterDetailStore);
  private readonly certificates = inject(NodeCertificatesStore);
  /** Node names with a certificate under 30 days left (or expired). */
  protected readonly expiringSoon = computed(() => new Set(this.certificates.certificates().filter((entry) => entry.expiringSoon).map((entry) => entry.node)));

  protected readonly canAdd = computed(() => this.session.allows('OPERATOR'));
  protected readonly filter = computed<StatusFilter>(() => {
    const value = this.status();
    return isStatusFilter(value) ? value : 'all';
  });
  protected readonly shown = computed(() => this.store.nodes().filter((node) => matchesFilter(node, this.filter())));
  protected readonly families = STATUS_FAMILIES;
  /** Host filters some node matches: drifted, outdated. */
  protected readonly hostFiltersPresent = computed(() => HOST_FILTERS.filter((filter) => this.counts().has(filter)));
  /** How many nodes each status and each family has, counted once per list change (not per option and render). */
  private readonly counts = computed(() => statusCounts(this.store.nodes()));
  /** Statuses that occur, in lifecycle order, for the exact-status options. */
  protected readonly statusesPresent = computed(() => NODE_STATUSES.filter((status) => this.counts().has(status)));
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });
  protected readonly heading = computed(() => {
    const name = this.cluster.cluster()?.name;
    return name ? this.t('list.headingOf', { cluster: name }) : this.t('list.heading');
  });

  constructor() {
    effect(() => {
      this.store.select(this.clusterId());
      this.cluster.select(this.clusterId());
      this.certificates.select(this.clusterId(), null);
    });
  }

  protected countOf(filter: StatusFilter): number {
    return this.counts().get(filter) ?? 0;
  }

  /** The shown nodes from `start` to before `end`: the rows the table renders (all of them in a short list). */
  protected visible(start: number, end: number): readonly NodeSummary[] {
    const shown = this.shown();
    return start === 0 && end >= shown.length ? shown : shown.slice(start, end);
  }

  protected familyLabel(family: StatusFamily): string {
    return this.t(`family.${family}`, { count: this.countOf(family) });
  }

  protected hostFilterLabel(filter: HostFilter): string {
    return this.t(`filter.host.${filter}`, { count: this.countOf(filter) });
  }

  protected statusLabel(status: NodeStatus): string {
    return this.t(`status.${status}`);
  }

  /** What makes the node unhealthy, in the user's language, for the badge's tooltip. */
  protected healthProblems(node: NodeSummary): string {
    return (node.health?.problems ?? []).map((problem) => this.i18n.server(problem.messageCode, problem.messageParams, problem.message)).join('\n');
  }

  protected tone(node: NodeSummary) {
    return statusTone(node.status);
  }

  protected family(node: NodeSummary): StatusFamily {
    return statusFamily(node.status);
  }

  protected chooseFilter(event: Event): void {
    const value = (event.target as HTMLSelectElement).value;
    void this.router.navigate([], { queryParams: { status: value === 'all' ? null : value }, queryParamsHandling: 'merge', replaceUrl: true });
  }
}
