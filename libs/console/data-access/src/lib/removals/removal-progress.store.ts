import { Injectable, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { CancelRemovalDocument, ForceRemovalDrainDocument, RemovalProgressDocument, RemovalRunsDocument, SkipRemovalHostSideDocument, UncordonNodeDocument, type UncordonNodeMutation } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { liveSubscription } from '../apollo/live-subscription';
import { type Outcome, problemsOf } from '../errors/api-problem';
import { NodeRuns } from '../runs/node-runs';
import type { RemovalEventView, RemovalRunView } from './removal';

export type UncordonResult = UncordonNodeMutation['uncordonNode'];

/**
 * A node's removals (移除节点): its runs, and the latest one live through `removalProgress`
 * (the first message carries every event so far, later ones the new events and the run as
 * it is now; no polling). Cancelling a drain and uncordoning after a failed one. Provide it
 * in the node page; call {@link select} with the node id.
 */
@Injectable()
export class RemovalProgressStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(RemovalRunsDocument);
  private readonly progress = liveSubscription(RemovalProgressDocument);
  private nodeId: string | null = null;
  // The query lists every run with its events so far; the live stream adds the latest run's.
  private readonly removalRuns = new NodeRuns<RemovalRunView, RemovalEventView>(
    () => this.query.data()?.removalRuns ?? [],
    (runId) => this.query.data()?.removalRuns.find((run) => run.id === runId)?.events ?? [],
  );
  private readonly sending = signal<'cancel' | 'uncordon' | 'skipHost' | 'forceDrain' | null>(null);

  readonly busy = this.sending.asReadonly();
  readonly live = this.progress.live;
  readonly liveProblems = this.progress.problems;
  readonly problems = this.query.problems;

  /** Every removal run of the node, oldest first; one started since the page loaded is included. */
  readonly runs = this.removalRuns.runs;
  readonly currentRun = this.removalRuns.currentRun;
  /** Earlier runs, newest first. */
  readonly previousRuns = this.removalRuns.previousRuns;

  select(nodeId: string): void {
    if (nodeId === this.nodeId) {
      return;
    }
    this.nodeId = nodeId;
    this.removalRuns.follow(nodeId);
    this.query.watch({ nodeId });
    this.progress.start({ nodeId }, { next: ({ removalProgress }) => this.removalRuns.apply(removalProgress) });
  }

  reload(): void {
    this.query.refetch();
    this.progress.restart();
  }

  /** The run's events: those listed with it merged with those that arrived live. */
  eventsOf(runId: string): readonly RemovalEventView[] {
    return this.removalRuns.eventsOf(runId);
  }

  /** Stops a removal while it drains; the node stays cordoned (DRAIN_FAILED). */
  cancel(): Promise<Outcome<RemovalRunView>> {
    return this.send('cancel', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: CancelRemovalDocument, variables: { nodeId } }));
      return { value: result.data?.cancelRemoval, error: result.error };
    });
  }

  /** Has the running removal go on without its host (a host that is gone); the node is then marked reinstall required. */
  skipHostSide(reason: string): Promise<Outcome<RemovalRunView>> {
    return this.send('skipHost', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: SkipRemovalHostSideDocument, variables: { nodeId, reason } }));
      return { value: result.data?.skipRemovalHostSide, error: result.error };
    });
  }

  /** Has the running drain go past the PodDisruptionBudgets that hold it (ADMIN): the pods they hold are deleted instead of evicted. */
  forceDrain(reason: string): Promise<Outcome<RemovalRunView>> {
    return this.send('forceDrain', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: ForceRemovalDrainDocument, variables: { nodeId, reason } }));
      return { value: result.data?.forceRemovalDrain, error: result.error };
    });
  }

  /** Makes the node schedulable again after a failed or cancelled removal (DRAIN_FAILED → JOINED). */
  uncordon(): Promise<Outcome<UncordonResult>> {
    return this.send('uncordon', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: UncordonNodeDocument, variables: { nodeId } }));
      return { value: result.data?.uncordonNode, error: result.error };
    });
  }

  private async send<V>(action: 'cancel' | 'uncordon' | 'skipHost' | 'forceDrain', call: (nodeId: string) => Promise<{ readonly value: V | null | undefined; readonly error: unknown }>): Promise<Outcome<V>> {
    const nodeId = this.nodeId;
    if (!nodeId) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no node selected', field: null }] };
    }
    this.sending.set(action);
    try {
      const { value, error } = await call(nodeId);
      return value ? { ok: true, value } : { ok: false, problems: problemsOf(error) };
    } catch (error) {
      return { ok: false, problems: problemsOf(error) };
    } finally {
      this.sending.set(null);
    }
  }
}
