import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { ClustersDocument, RegisterClusterDocument, type RegisterClusterInput } from '@ccos/shared/api-schema';
import { type ApiProblem, type Outcome, fieldProblems, problemsOf } from '../errors/api-problem';
import { type Cluster, byClusterName } from './cluster';

/** The register-cluster form's server side: sending, and the API's problems per field. */
@Injectable()
export class ClusterRegistrationStore {
  private readonly apollo = inject(Apollo);
  private readonly sending = signal(false);
  private readonly lastProblems = signal<readonly ApiProblem[]>([]);

  readonly saving = this.sending.asReadonly();
  readonly problems = this.lastProblems.asReadonly();
  /** The API's messages keyed by input field (`name`, `vip`, `kubeconfig` …), shown next to the field. */
  readonly fieldErrors = computed(() => fieldProblems(this.lastProblems()));

  async register(input: RegisterClusterInput): Promise<Outcome<Cluster>> {
    this.sending.set(true);
    this.lastProblems.set([]);
    try {
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
      const cluster = result.data?.registerCluster;
      if (cluster) {
        return { ok: true, value: cluster };
      }
      return this.failed(problemsOf(result.error));
    } catch (error) {
      return this.failed(problemsOf(error));
    } finally {
      this.sending.set(false);
    }
  }

  private failed(problems: readonly ApiProblem[]): Outcome<Cluster> {
    this.lastProblems.set(problems);
    return { ok: false, problems };
  }
}
