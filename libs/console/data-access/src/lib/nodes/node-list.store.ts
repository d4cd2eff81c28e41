import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { NodeChangedDocument, type NodeChangedSubscription, NodeListDocument } from '@ccos/shared/api-schema';
import { liveSubscription } from '../apollo/live-subscription';
import { type ApiProblem, problemsOf } from '../errors/api-problem';
import { type NodeSummary, byHostname } from './node';

/**
 * Rows asked for first on a visit: more than a window shows, so the page fills at once while the
 * whole list comes; and above the virtual rows' threshold (150), so a long table keeps its form
 * when the rest arrives.
 */
export const FIRST_PAGE_SIZE = 200;

interface ListState {
  readonly nodes: readonly NodeSummary[] | undefined;
  /** `nodes` is the whole list, not only its first page. */
  readonly complete: boolean;
  readonly loading: boolean;
  readonly problems: readonly ApiProblem[];
}

/**
 * The nodes of one cluster, kept current by `nodeChanged` (no polling): a changed node is
 * replaced in the list, a new one is added in hostname order, a deleted one dropped.
 * Provide it in the page; call {@link select} with the route's cluster id.
 *
 * The list is held here, not in Apollo's normalised cache: at 5,000 nodes, writing the query
 * into the cache and reading it back cost seconds of the page's main thread, and every change
 * to any node made Apollo read the whole list again. Each visit asks the server afresh
 * (`no-cache`), so what other pages wrote to the cache (an added node) shows all the same.
 * A visit asks for the first {@link FIRST_PAGE_SIZE} rows, then for the whole list (at 5,000
 * nodes the whole list takes the server half a second); until it is in, {@link complete} is false.
 */
@Injectable()
export class NodeListStore {
  private readonly apollo = inject(Apollo);
  private readonly changes = liveSubscription(NodeChangedDocument);
  private readonly state = signal<ListState>({ nodes: undefined, complete: false, loading: false, problems: [] });
  private clusterId: string | null = null;
  /** Bumped per request, so an older answer never overwrites a newer one. */
  private asked = 0;

  readonly nodes = computed(() => this.state().nodes ?? []);
  readonly loading = computed(() => this.state().loading && this.state().nodes === undefined);
  readonly problems = computed(() => this.state().problems);
  /** The whole list is in; until then counts and filters would cover only the first page. */
  readonly complete = computed(() => this.state().complete);
  /** Updates are arriving (the subscription is up). */
  readonly live = this.changes.live;
  readonly liveProblems = this.changes.problems;

  select(clusterId: string): void {
    if (clusterId === this.clusterId) {
      return;
    }
    this.clusterId = clusterId;
    this.state.set({ nodes: undefined, complete: false, loading: true, problems: [] });
    void this.fetch(clusterId, FIRST_PAGE_SIZE);
    this.changes.start({ clusterId }, { next: (data) => this.apply(data.nodeChanged), reconnected: () => void this.fetch(clusterId) });
  }

  reload(): void {
    if (this.clusterId) {
      void this.fetch(this.clusterId);
    }
    this.changes.restart();
  }

  /** Asks for the list (or its first page, then the whole list when the page came back full). */
  private async fetch(clusterId: string, first?: number): Promise<void> {
    const question = ++this.asked;
    this.state.update((previous) => ({ ...previous, loading: true, problems: [] }));
    try {
      // The page shows a failed query as an error state with a retry button, so no toast.
      const result = await firstValueFrom(this.apollo.query({ query: NodeListDocument, variables: { clusterId, first }, fetchPolicy: 'no-cache', context: { errorDisplay: 'caller' } }));
      if (question !== this.asked) {
        return;
      }
      const nodes = result.data?.nodes;
      const more = first !== undefined && nodes?.length === first;
      this.state.update((previous) => ({
        nodes: nodes ?? (result.error ? previous.nodes : []),
        complete: nodes ? !more : previous.complete,
        loading: false,
        problems: result.error ? problemsOf(result.error) : [],
      }));
      if (more) {
        void this.fetch(clusterId);
      }
    } catch (error) {
      if (question === this.asked) {
        this.state.update((previous) => ({ ...previous, loading: false, problems: problemsOf(error) }));
      }
    }
  }

  private apply(change: NodeChangedSubscription['nodeChanged']): void {
    this.state.update((previous) => {
      const existing = previous.nodes;
      if (!existing) {
        // Not loaded yet: the answer on its way includes the change.
        return previous;
      }
      const index = existing.findIndex((node) => node.id === change.nodeId);
      if (!change.node) {
        return index < 0 ? previous : { ...previous, nodes: existing.filter((_, at) => at !== index) };
      }
      const node = change.node;
      if (index >= 0 && existing[index]?.hostname === node.hostname) {
        const nodes = [...existing];
        nodes[index] = node;
        return { ...previous, nodes };
      }
      const others = index < 0 ? existing : existing.filter((_, at) => at !== index);
      return { ...previous, nodes: [...others, node].sort(byHostname) };
    });
  }
}
