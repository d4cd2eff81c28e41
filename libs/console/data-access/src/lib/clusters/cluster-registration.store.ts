import { Injectable, inject } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { ClustersDocument, RegisterClusterDocument, type RegisterClusterInput } from '@ccos/shared/api-schema';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';
import { type Cluster, byClusterName } from './cluster';

/** The register-cluster form's server side: sending, and the API's problems per field. */
@Injectable()
export class ClusterRegistrationStore {
  private readonly apollo = inject(Apollo);
  private readonly submission = new FormSubmission();

  readonly saving = this.submission.sending;
  readonly problems = this.submission.problems;
  /** The API's messages keyed by input field (`name`, `vip`, `kubeconfig` …), shown next to the field. */
  readonly fieldErrors = this.submission.fieldErrors;

  register(input: RegisterClusterInput): Promise<Outcome<Cluster>> {
    return this.submission.send(async () => {
      const result = await firstValueFrom(
        this.apollo.mutate({
          mutation: RegisterClusterDocument,
          variables: { input },
          context: { errorDisplay: 'fields' },
          update: (cache, { data }) => {
            const created = data?.registerCluster;
            if (created) {
              cache.updateQuery({ query: ClustersDocument }, (existing) =>
                existing ? { clusters: [...existing.clusters.filter((cluster) => cluster.id !== created.id), created].sort(byClusterName) } : existing,
              );
            }
          },
        }),
      );
      return { value: result.data?.registerCluster, error: result.error };
    });
  }
}
