import { ChangeDetectionStrategy, Component, computed, inject } from '@angular/core';
import { RouterLink } from '@angular/router';
import { type Cluster, ClusterListStore, ErrorReporter, Session } from '@ccos/console/data-access';
import { ButtonDirective, DataStateComponent, PageHeaderComponent, StatusBadgeComponent } from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import { clustersMessages } from '../clusters.messages';

/** All registered clusters; ADMIN can register one from here. */
@Component({
  selector: 'ccos-cluster-list-page',
  imports: [RouterLink, ButtonDirective, DataStateComponent, PageHeaderComponent, StatusBadgeComponent],
  providers: [ClusterListStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './cluster-list.page.html',
  styles: `
    .name { font-weight: 600; white-space: nowrap; }
    .url { font-family: var(--ccos-mono); font-size: 0.85rem; }
  `,
})
export class ClusterListPage {
  private readonly session = inject(Session);
  private readonly errors = inject(ErrorReporter);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(clustersMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(ClusterListStore);

  protected readonly canRegister = computed(() => this.session.allows('ADMIN'));
  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  protected credentialLabel(cluster: Cluster): string {
    return cluster.credentialKind === 'TOKEN' ? this.t('credential.TOKEN') : this.t('credential.KUBECONFIG');
  }
}
