import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import {
  CancelRolloutDocument,
  PauseRolloutDocument,
  ResumeRolloutDocument,
  RolloutChangedDocument,
  type RolloutFieldsFragment,
  RolloutPreviewDocument,
  type RolloutPreviewQuery,
  RolloutsDocument,
  StartRolloutDocument,
  type StartRolloutInput,
} from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { liveSubscription } from '../apollo/live-subscription';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type RolloutView = RolloutFieldsFragment;
export type RolloutPreviewView = RolloutPreviewQuery['rolloutPreview'];
export type RolloutAction = 'pause' | 'resume' | 'cancel';

/**
 * A cluster's rollouts, live through `rolloutChanged` (each message is a whole rollout, which Apollo
 * writes over the cached one), starting one (its refusals keyed by field: `input.window.cron`, …)
 * and pausing, resuming or cancelling the latest. Provide it where the cluster's page shows it.
 */
@Injectable()
export class ClusterRolloutsStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(RolloutsDocument);
  private readonly changes = liveSubscription(RolloutChangedDocument);
  private readonly starting = new FormSubmission();
  private readonly actions = new FormSubmission();
  private readonly acting = signal<RolloutAction | null>(null);

  readonly rollouts = computed<readonly RolloutView[]>(() => this.query.data()?.rollouts ?? []);
  readonly latest = computed<RolloutView | null>(() => this.rollouts()[0] ?? null);
  readonly problems = this.query.problems;
  readonly live = this.changes.live;
  readonly sending = this.starting.sending;
  readonly fieldErrors = this.starting.fieldErrors;
  readonly startProblems = this.starting.problems;
  readonly busy = this.acting.asReadonly();

  select(clusterId: string): void {
    this.query.watch({ clusterId });
    // A rollout this page has not listed yet (started elsewhere) comes with a fresh list.
    this.changes.start({ clusterId }, {
      next: (data) => {
        if (!this.rollouts().some((rollout) => rollout.id === data.rolloutChanged.id)) {
          this.query.refetch();
        }
      },
      reconnected: () => this.query.refetch(),
    });
  }

  /** What starting with this input would do now (each node's drain, the window, firing alerts); refused as a start would be. */
  preview(input: StartRolloutInput): Promise<Outcome<RolloutPreviewView>> {
    return this.starting.send(async () => {
      const result = await firstValueFrom(this.apollo.query({ query: RolloutPreviewDocument, variables: { input }, fetchPolicy: 'network-only', context: { errorDisplay: 'fields' } }));
      return { value: result.data?.rolloutPreview, error: result.error };
    });
  }

  start(input: StartRolloutInput): Promise<Outcome<RolloutView>> {
    return this.starting.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: StartRolloutDocument, variables: { input }, context: { errorDisplay: 'fields' } }));
      if (result.data?.startRollout) {
        this.query.refetch();
      }
      return { value: result.data?.startRollout, error: result.error };
    });
  }

  async act(action: RolloutAction, id: string): Promise<Outcome<RolloutView>> {
    this.acting.set(action);
    try {
      return await this.actions.send(async () => {
        if (action === 'pause') {
          const result = await firstValueFrom(this.apollo.mutate({ mutation: PauseRolloutDocument, variables: { id } }));
          return { value: result.data?.pauseRollout, error: result.error };
        }
        if (action === 'resume') {
          const result = await firstValueFrom(this.apollo.mutate({ mutation: ResumeRolloutDocument, variables: { id } }));
          return { value: result.data?.resumeRollout, error: result.error };
        }
        const result = await firstValueFrom(this.apollo.mutate({ mutation: CancelRolloutDocument, variables: { id } }));
        return { value: result.data?.cancelRollout, error: result.error };
      });
    } finally {
      this.acting.set(null);
    }
  }
}
