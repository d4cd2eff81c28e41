import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { type ApprovalRequestFieldsFragment, ApprovalRequestsChangedDocument, ApproveRequestDocument, RejectRequestDocument, SetClusterFourEyesDocument } from '@ccos/shared/api-schema';
import { liveSubscription } from '../apollo/live-subscription';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission, type MutationAnswer } from '../forms/form-submission';

export type ApprovalRequestView = ApprovalRequestFieldsFragment;

/**
 * A cluster's four-eyes approvals, live through `approvalRequestsChanged` (each message is the
 * cluster's latest requests): approving or rejecting another user's held action, and turning
 * four-eyes on or off (ADMIN). Provide it where the cluster's page shows them.
 */
@Injectable()
export class ClusterApprovalsStore {
  private readonly apollo = inject(Apollo);
  private readonly changes = liveSubscription(ApprovalRequestsChangedDocument);
  private readonly listed = signal<readonly ApprovalRequestView[] | null>(null);
  private readonly deciding = new FormSubmission();
  private readonly switching = new FormSubmission();
  private readonly decidingId = signal<string | null>(null);

  readonly requests = computed(() => this.listed() ?? []);
  readonly pending = computed(() => this.requests().filter((request) => request.status === 'PENDING'));
  readonly decided = computed(() => this.requests().filter((request) => request.status !== 'PENDING'));
  readonly loading = computed(() => this.listed() === null && this.changes.problems().length === 0);
  readonly live = this.changes.live;
  readonly problems = this.changes.problems;
  /** The request being approved or rejected now. */
  readonly busy = this.decidingId.asReadonly();
  readonly fieldErrors = this.deciding.fieldErrors;
  readonly switchingFourEyes = this.switching.sending;

  select(clusterId: string): void {
    this.changes.start({ clusterId }, { next: (data) => this.listed.set(data.approvalRequestsChanged) });
  }

  approve(id: string): Promise<Outcome<ApprovalRequestView>> {
    return this.decide(id, async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: ApproveRequestDocument, variables: { id } }));
      return { value: result.data?.approveRequest, error: result.error };
    });
  }

  reject(id: string, reason: string): Promise<Outcome<ApprovalRequestView>> {
    return this.decide(id, async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: RejectRequestDocument, variables: { id, reason }, context: { errorDisplay: 'fields' } }));
      return { value: result.data?.rejectRequest, error: result.error };
    });
  }

  setFourEyes(clusterId: string, enabled: boolean): Promise<Outcome<{ readonly name: string; readonly fourEyes: boolean }>> {
    return this.switching.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: SetClusterFourEyesDocument, variables: { clusterId, enabled } }));
      return { value: result.data?.setClusterFourEyes, error: result.error };
    });
  }

  private async decide(id: string, send: () => Promise<MutationAnswer<ApprovalRequestView>>): Promise<Outcome<ApprovalRequestView>> {
    this.decidingId.set(id);
    try {
      return await this.deciding.send(send);
    } finally {
      this.decidingId.set(null);
    }
  }
}
