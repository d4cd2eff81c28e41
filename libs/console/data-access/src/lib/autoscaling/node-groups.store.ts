import { Injectable, computed, signal } from '@angular/core';
import { NodeGroupsChangedDocument, type NodeGroupsChangedSubscription } from '@ccos/shared/api-schema';
import { liveSubscription } from '../apollo/live-subscription';

export type NodeGroupView = NodeGroupsChangedSubscription['nodeGroupsChanged'][number];
export type NodeGroupHostView = NodeGroupView['hosts'][number];
export type AutoscalingActivityView = NodeGroupView['activity'][number];

/**
 * A cluster's node groups with their pools and activity, live: the subscription sends the groups
 * as they are, then again at every decision (reserve, install, delete, return to pool) and host
 * state change. Provide it in the page.
 */
@Injectable()
export class NodeGroupsStore {
  private readonly subscription = liveSubscription(NodeGroupsChangedDocument);
  private readonly state = signal<{ readonly groups: readonly NodeGroupView[]; readonly loaded: boolean }>({ groups: [], loaded: false });

  readonly groups = computed(() => this.state().groups);
  readonly loaded = computed(() => this.state().loaded);
  readonly live = this.subscription.live;
  readonly problems = this.subscription.problems;

  select(clusterId: string): void {
    this.state.set({ groups: [], loaded: false });
    this.subscription.start({ clusterId }, {
      next: (data) => this.state.set({ groups: data.nodeGroupsChanged, loaded: true }),
      reconnected: () => this.subscription.restart(),
    });
  }

  retry(): void {
    this.subscription.restart();
  }
}
