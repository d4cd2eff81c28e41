import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import {
  AddNodesDocument,
  type AddNodesInput,
  type AddNodesMutation,
  BatchDocument,
  type BatchQuery,
  BatchProgressDocument,
  CancelRemainingDocument,
  InstallBatchDocument,
  RetryFailedDocument,
} from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { liveSubscription } from '../apollo/live-subscription';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission, type MutationAnswer } from '../forms/form-submission';

export type AddNodesResult = AddNodesMutation['addNodes'];
export type NodeBatchView = BatchQuery['batch'];

/**
 * Bulk add (many hosts in one request; the API checks every row and answers with the
 * problems on their rows) and one batch, live through `batchProgress` (no polling): install,
 * retry the failed, cancel the rest. The shared password or key is not kept after a send.
 */
@Injectable()
export class NodeBatchStore {
  private readonly apollo = inject(Apollo);
  private readonly submission = new FormSubmission();
  private readonly actions = new FormSubmission();
  private readonly query = liveQuery(BatchDocument);
  private readonly progress = liveSubscription(BatchProgressDocument);
  private readonly acting = signal<'install' | 'retry' | 'cancel' | null>(null);
  private batchId: string | null = null;

  readonly saving = this.submission.sending;
  readonly problems = this.submission.problems;
  readonly busy = this.acting.asReadonly();
  readonly live = this.progress.live;
  readonly loadProblems = this.query.problems;
  readonly batch = computed<NodeBatchView | null>(() => this.query.data()?.batch ?? null);

  /** Checks (dryRun) or adds the rows; the answer carries every row with its problems. */
  add(input: AddNodesInput): Promise<Outcome<AddNodesResult>> {
    return this.submission.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: AddNodesDocument, variables: { input }, context: { errorDisplay: 'fields' } }));
      return { value: result.data?.addNodes, error: result.error };
    });
  }

  select(batchId: string): void {
    if (batchId === this.batchId) {
      return;
    }
    this.batchId = batchId;
    this.query.watch({ id: batchId });
    // Each message is the whole batch; Apollo writes it over the cached one the page shows.
    this.progress.start({ batchId }, { next: () => undefined, reconnected: () => this.query.refetch() });
  }

  install(concurrency: number | null): Promise<Outcome<NodeBatchView>> {
    return this.act('install', async (batchId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: InstallBatchDocument, variables: { batchId, concurrency } }));
      return { value: result.data?.installBatch, error: result.error };
    });
  }

  retryFailed(): Promise<Outcome<NodeBatchView>> {
    return this.act('retry', async (batchId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: RetryFailedDocument, variables: { batchId } }));
      return { value: result.data?.retryFailed, error: result.error };
    });
  }

  cancelRemaining(): Promise<Outcome<NodeBatchView>> {
    return this.act('cancel', async (batchId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: CancelRemainingDocument, variables: { batchId } }));
      return { value: result.data?.cancelRemaining, error: result.error };
    });
  }

  private async act(kind: 'install' | 'retry' | 'cancel', mutate: (batchId: string) => Promise<MutationAnswer<NodeBatchView>>): Promise<Outcome<NodeBatchView>> {
    const batchId = this.batchId;
    if (!batchId) {
      return { ok: false, problems: [] };
    }
    this.acting.set(kind);
    try {
      return await this.actions.send(() => mutate(batchId));
    } finally {
      this.acting.set(null);
    }
  }
}
