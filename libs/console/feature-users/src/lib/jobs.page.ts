import { ChangeDetectionStrategy, Component, computed, inject } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ErrorReporter, type FailedJob, FailedJobsStore, Notifications } from '@ccos/console/data-access';
import { ButtonDirective, DataStateComponent, PageHeaderComponent } from '@ccos/console/ui';
import { I18n, commonMessages } from '@ccos/console/util-i18n';
import { jobsMessages } from './jobs.messages';

/** Tasks the page names in the user's language; any other is shown by its identifier. */
const NAMED_TASKS = new Set(['node.provision']);

/** Failed jobs (ADMIN): the durable jobs that used up their attempts, each with its last error and a retry. */
@Component({
  selector: 'ccos-jobs-page',
  imports: [ButtonDirective, DataStateComponent, PageHeaderComponent, RouterLink],
  providers: [FailedJobsStore],
  changeDetection: ChangeDetectionStrategy.OnPush,
  templateUrl: './jobs.page.html',
  styleUrl: './jobs.page.css',
})
export class JobsPage {
  private readonly errors = inject(ErrorReporter);
  private readonly notifications = inject(Notifications);
  protected readonly i18n = inject(I18n);
  protected readonly t = this.i18n.translator(jobsMessages);
  protected readonly common = this.i18n.translator(commonMessages);
  protected readonly store = inject(FailedJobsStore);

  protected readonly problem = computed(() => {
    const problem = this.store.problems()[0];
    return problem ? this.errors.messageOf(problem) : null;
  });

  protected taskLabel(job: FailedJob): string {
    return NAMED_TASKS.has(job.task) ? this.t(`task.${job.task}` as 'task.node.provision') : this.t('task.other', { task: job.task });
  }

  /** The node's page, when the job works on a node. */
  protected nodeLink(job: FailedJob): string[] | null {
    return job.nodeId && job.clusterId ? ['/clusters', job.clusterId, 'nodes', job.nodeId] : null;
  }

  protected async retry(job: FailedJob): Promise<void> {
    if ((await this.store.retry(job.id)).ok) {
      this.notifications.show('success', () => this.t('retried', { id: job.id }));
    }
  }
}
