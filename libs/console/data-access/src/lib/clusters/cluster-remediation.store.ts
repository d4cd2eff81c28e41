import { Injectable, computed, inject } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { ClusterRemediationDocument, type ClusterRemediationQuery, type RemediationPolicyInput, SetRemediationPolicyDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type ClusterRemediation = ClusterRemediationQuery['clusterRemediation'];

/**
 * A cluster's remediation (its policy, and whether the cap holds it now) and setting the policy
 * (ADMIN): the API's refusals are keyed by field (`input.maxUnhealthy`, …). Provide it where the
 * cluster's page shows it.
 */
@Injectable()
export class ClusterRemediationStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(ClusterRemediationDocument);
  private readonly saving = new FormSubmission();

  readonly remediation = computed(() => this.query.data()?.clusterRemediation ?? null);
  readonly problems = this.query.problems;
  readonly sending = this.saving.sending;
  readonly fieldErrors = this.saving.fieldErrors;

  select(clusterId: string): void {
    this.query.watch({ clusterId });
  }

  reload(): void {
    this.query.refetch();
  }

  save(clusterId: string, input: RemediationPolicyInput): Promise<Outcome<ClusterRemediation>> {
    return this.saving.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: SetRemediationPolicyDocument, variables: { clusterId, input }, context: { errorDisplay: 'fields' } }));
      if (result.data?.setRemediationPolicy) {
        // The answer has no id for the cache to merge by: read the remediation again.
        this.query.refetch();
      }
      return { value: result.data?.setRemediationPolicy, error: result.error };
    });
  }
}
