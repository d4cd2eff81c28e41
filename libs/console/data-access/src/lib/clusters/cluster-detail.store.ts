import { Injectable, computed, effect, inject, untracked } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { ClusterArtifactSetDocument, ClusterChecksDocument, ClusterDocument, type HostMinimumsInput, SetAutoApproveRenewalsDocument, SetClusterHostMinimumsDocument, SetCsrAutoApproveDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';
import type { Cluster } from './cluster';

/** One cluster and its settings. Provide it in the cluster page; call {@link select} with the route's id. */
@Injectable()
export class ClusterDetailStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(ClusterDocument);
  /** Apart from the cluster: asking the cluster its version may fail without the page failing. */
  private readonly artifactQuery = liveQuery(ClusterArtifactSetDocument);
  /** Apart too: the readiness checks ask the cluster itself, and take a moment. */
  private readonly checksQuery = liveQuery(ClusterChecksDocument);
  private selectedId: string | null = null;
  private readonly autoApproveChange = new FormSubmission();

  readonly cluster = computed(() => this.query.data()?.cluster ?? null);
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;
  readonly saving = this.autoApproveChange.sending;
  /** The artifact set the cluster's installs use and what it lacks. */
  readonly artifactSet = computed(() => this.artifactQuery.data()?.clusterArtifactSet ?? null);
  readonly artifactSetProblems = this.artifactQuery.problems;
  /** Whether the cluster is ready for installs, each check with its reason and fix; null until answered (or not asked: see {@link select}). */
  readonly checks = computed(() => this.checksQuery.data()?.clusterChecks ?? null);
  /**
   * The checks the cluster's last readiness check found failing, as the service recorded it (what
   * installs are gated on): no request to the cluster. Empty when it passed or was never checked.
   */
  readonly failingChecks = computed(() => this.cluster()?.readiness?.failing ?? []);
  readonly checking = this.checksQuery.loading;
  readonly checksProblems = this.checksQuery.problems;

  constructor() {
    // Every check records its outcome on the cluster: read it again, so that every page showing
    // the recorded readiness (a node's Install, a batch's) has the new one.
    effect(() => {
      if (this.checksQuery.data()) {
        untracked(() => this.query.refetch());
      }
    });
  }

  /**
   * Follows the cluster. With `checks`, also asks the cluster whether it is ready for installs
   * (the cluster page): about 30 requests to its API server and one throwaway account, so pages
   * that only need the outcome read {@link failingChecks} instead.
   */
  select(id: string, { checks = false }: { readonly checks?: boolean } = {}): void {
    if (id !== this.selectedId) {
      this.selectedId = id;
      this.query.watch({ id });
      this.artifactQuery.watch({ clusterId: id });
      if (checks) {
        this.checksQuery.watch({ clusterId: id });
      }
    }
  }

  /** Asks the cluster again, after someone applied a fix. */
  recheck(): void {
    this.checksQuery.refetch();
  }

  reload(): void {
    this.query.refetch();
    this.artifactQuery.refetch();
  }

  /** Turns the CSR auto-approver on or off; the cache (and so every page) takes the returned cluster. Errors are toasts. */
  async setCsrAutoApprove(enabled: boolean): Promise<Outcome<Cluster>> {
    const clusterId = this.selectedId;
    if (!clusterId) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no cluster selected', field: null }] };
    }
    return this.autoApproveChange.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: SetCsrAutoApproveDocument, variables: { clusterId, enabled } }));
      return { value: result.data?.setCsrAutoApprove, error: result.error };
    });
  }

  /** Turns renewal auto-approve (serving certificates of nodes joined here) on or off, independently of join approval. */
  async setAutoApproveRenewals(renewals: boolean): Promise<Outcome<Cluster>> {
    const clusterId = this.selectedId;
    if (!clusterId) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no cluster selected', field: null }] };
    }
    return this.autoApproveChange.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: SetAutoApproveRenewalsDocument, variables: { clusterId, renewals } }));
      return { value: result.data?.setCsrAutoApprove, error: result.error };
    });
  }

  /** What every host added to the cluster must have at least (ADMIN); null asks nothing. Its field problems show on the form. */
  readonly minimumsChange = new FormSubmission();

  async setHostMinimums(minimums: HostMinimumsInput | null): Promise<Outcome<Cluster>> {
    const clusterId = this.selectedId;
    if (!clusterId) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no cluster selected', field: null }] };
    }
    return this.minimumsChange.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: SetClusterHostMinimumsDocument, variables: { clusterId, minimums }, context: { errorDisplay: 'fields' } }));
      return { value: result.data?.setClusterHostMinimums, error: result.error };
    });
  }
}
