import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import {
  AddNodeGroupSpareDocument,
  type AddSpareInput,
  CreateNodeGroupDocument,
  type CreateNodeGroupInput,
  NodeGroupsChangedDocument,
  type NodeGroupsChangedSubscription,
  ScaleDownNodeGroupDocument,
  ScaleUpNodeGroupDocument,
} from '@ccos/shared/api-schema';
import { liveSubscription } from '../apollo/live-subscription';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type NodeGroupView = NodeGroupsChangedSubscription['nodeGroupsChanged'][number];
export type NodeGroupHostView = NodeGroupView['hosts'][number];
export type AutoscalingActivityView = NodeGroupView['activity'][number];

/**
 * A cluster's node groups with their pools and activity, live: the subscription sends the groups
 * as they are, then again at every decision (reserve, install, delete, return to pool) and host
 * state change. It also creates groups, adds spares and scales by hand; what that changes comes
 * back through the subscription. Provide it in the page.
 */
@Injectable()
export class NodeGroupsStore {
  private readonly apollo = inject(Apollo);
  private readonly subscription = liveSubscription(NodeGroupsChangedDocument);
  private readonly state = signal<{ readonly groups: readonly NodeGroupView[]; readonly loaded: boolean }>({ groups: [], loaded: false });

  readonly groups = computed(() => this.state().groups);
  readonly loaded = computed(() => this.state().loaded);
  readonly live = this.subscription.live;
  readonly problems = this.subscription.problems;
  /** Creating a group: its field problems (`name`, `maxSize`, …). */
  readonly creation = new FormSubmission();
  /** Adding a spare: its field problems (`hostname`, `ip`, `password`, …). */
  readonly spareAddition = new FormSubmission();
  /** Scaling up or down by hand. */
  readonly scaling = new FormSubmission();

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

  async createGroup(input: CreateNodeGroupInput): Promise<Outcome<NodeGroupView>> {
    const outcome = await this.creation.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: CreateNodeGroupDocument, variables: { input }, context: { errorDisplay: 'fields' } }));
      return { value: result.data?.createNodeGroup, error: result.error };
    });
    if (outcome.ok) {
      // A new group makes no decision, so nothing is published: ask for the groups again.
      this.subscription.restart();
    }
    return outcome;
  }

  addSpare(input: AddSpareInput): Promise<Outcome<{ readonly nodeId: string; readonly hostname: string }>> {
    return this.spareAddition.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: AddNodeGroupSpareDocument, variables: { input }, context: { errorDisplay: 'fields' } }));
      return { value: result.data?.addNodeGroupSpare, error: result.error };
    });
  }

  scaleUp(groupId: string, increaseBy: number): Promise<Outcome<NodeGroupView>> {
    return this.scaling.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: ScaleUpNodeGroupDocument, variables: { groupId, increaseBy } }));
      return { value: result.data?.scaleUpNodeGroup, error: result.error };
    });
  }

  scaleDown(groupId: string, nodeId: string): Promise<Outcome<NodeGroupView>> {
    return this.scaling.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: ScaleDownNodeGroupDocument, variables: { groupId, nodeId } }));
      return { value: result.data?.scaleDownNodeGroup, error: result.error };
    });
  }
}
