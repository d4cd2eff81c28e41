import { Injectable, computed, inject } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { NodeChangedDocument, type NodeChangedSubscription, NodesDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { liveSubscription } from '../apollo/live-subscription';
import { byHostname } from './node';

/**
 * The nodes of one cluster, kept current by `nodeChanged` (no polling): a changed node is
 * updated in the cache by Apollo, a new one is added to the list, a deleted one dropped.
 * Provide it in the page; call {@link select} with the route's cluster id.
 */
@Injectable()
export class NodeListStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(NodesDocument);
  private readonly changes = liveSubscription(NodeChangedDocument);
  private clusterId: string | null = null;

  readonly nodes = computed(() => this.query.data()?.nodes ?? []);
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;
  /** Updates are arriving (the subscription is up). */
  readonly live = this.changes.live;
  readonly liveProblems = this.changes.problems;

  select(clusterId: string): void {
    if (clusterId === this.clusterId) {
      return;
    }
    this.clusterId = clusterId;
    this.query.watch({ clusterId });
    this.changes.start({ clusterId }, { next: (data) => this.apply(clusterId, data.nodeChanged), reconnected: () => this.query.refetch() });
  }

  reload(): void {
    this.query.refetch();
    this.changes.restart();
  }

  private apply(clusterId: string, change: NodeChangedSubscription['nodeChanged']): void {
    this.apollo.client.cache.updateQuery({ query: NodesDocument, variables: { clusterId } }, (existing) => {
      if (!existing) {
        return existing;
      }
      const others = existing.nodes.filter((node) => node.id !== change.nodeId);
      if (!change.node) {
        return others.length === existing.nodes.length ? existing : { nodes: others };
      }
      if (others.length < existing.nodes.length) {
        // Known node: Apollo already merged the new fields into its cache entry.
        return existing;
      }
      return { nodes: [...others, change.node].sort(byHostname) };
    });
  }
}
