import { Injectable, computed } from '@angular/core';
import { ClustersDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';

/** The registered clusters, for the list page and the header's cluster switcher. Provide it in the component that shows them. */
@Injectable()
export class ClusterListStore {
  private readonly query = liveQuery(ClustersDocument);

  readonly clusters = computed(() => this.query.data()?.clusters ?? []);
  /** True only until the first answer; later refreshes keep showing the list. */
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;

  constructor() {
    this.query.watch({});
  }

  reload(): void {
    this.query.refetch();
  }
}
