import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { FailedJobsDocument, type FailedJobsQuery, RetryJobDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type FailedJob = FailedJobsQuery['failedJobs'][number];

/**
 * The durable jobs that used up their attempts (ADMIN), and retrying one: a retried job leaves
 * the list at once (it waits or runs again; if it fails again, a reload shows it again).
 * Provide it in the jobs page.
 */
@Injectable()
export class FailedJobsStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(FailedJobsDocument);
  private readonly retrying = new FormSubmission();
  /** Jobs retried since the list was read: they wait or run again, so they are not shown until a reload says otherwise. */
  private readonly retried = signal<ReadonlySet<string>>(new Set());

  readonly jobs = computed(() => (this.query.data()?.failedJobs ?? []).filter((job) => !this.retried().has(job.id)));
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;
  /** A retry is on its way. */
  readonly sending = this.retrying.sending;

  constructor() {
    this.query.watch({});
  }

  reload(): void {
    this.retried.set(new Set());
    this.query.refetch();
  }

  retry(id: string): Promise<Outcome<boolean>> {
    return this.retrying.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: RetryJobDocument, variables: { id } }));
      if (result.data?.retryJob) {
        this.retried.update((ids) => new Set([...ids, id]));
      }
      return { value: result.data?.retryJob, error: result.error };
    });
  }
}
