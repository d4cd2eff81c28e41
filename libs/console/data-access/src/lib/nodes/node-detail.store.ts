import { Injectable, computed, effect, inject, signal } from '@angular/core';
import type { ApolloCache } from '@apollo/client';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { I18n } from '@ccos/console/util-i18n';
import {
  AcceptHostKeyDocument,
  CancelInstallDocument,
  CleanHostDocument,
  DeleteNodeRecordDocument,
  InstallNodeDocument,
  InstallProgressDocument,
  InstallRunDocument,
  NodeChangedDocument,
  NodeDocument,
  NodesDocument,
  RecopyAgentDocument,
  RetryInstallDocument,
  type SshCredentialsInput,
  ReinspectHostDocument,
  UpdateNodeCredentialsDocument,
} from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { liveSubscription } from '../apollo/live-subscription';
import { type ApiProblem, type Outcome, fieldProblems, problemsOf } from '../errors/api-problem';
import { fieldProblemText } from '../errors/error-reporter';
import type { MutationAnswer } from '../forms/form-submission';
import { NodeRuns } from '../runs/node-runs';
import type { InstallRunView, NodeSummary, StepEventView } from './node';

/** How often the node is read again while its run waits for an install slot. */
const PLACE_IN_LINE_REFRESH_MS = 5000;

/** What the InstallRun operation asks for at once (`events(first: 500)`), the API's largest page. */
const EVENTS_PAGE = 500;

/** One mutation for a node. */
type Send<V> = (nodeId: string) => Promise<MutationAnswer<V>>;

/** What an operator can do to a node from its page. */
export type NodeAction = 'install' | 'retry' | 'cancel' | 'recopy' | 'credentials' | 'acceptHostKey' | 'delete' | 'clean' | 'reinspect';

/**
 * One node: its record (live through `nodeChanged`), its install runs, and the latest run's
 * steps and events live through `installProgress` — the first message carries every event
 * so far, each later one the new event and the run as it is now. No polling, except while the
 * latest run waits for one of its cluster's install slots: its place in line moves as other
 * nodes' runs end, which this node's streams do not carry. Provide it
 * in the node page; call {@link select} with the route's ids.
 */
@Injectable()
export class NodeDetailStore {
  private readonly apollo = inject(Apollo);
  private readonly i18n = inject(I18n);
  private readonly query = liveQuery(NodeDocument);
  private readonly nodeChanges = liveSubscription(NodeChangedDocument);
  private readonly progress = liveSubscription(InstallProgressDocument);
  private nodeId: string | null = null;
  // The node query lists runs without events: the live stream carries the latest run's, an earlier run's are fetched on demand.
  private readonly installRuns = new NodeRuns<InstallRunView, StepEventView>(() => this.node()?.installRuns ?? []);
  private readonly runsLoading = signal<ReadonlySet<string>>(new Set());
  private readonly running = signal<NodeAction | null>(null);
  private readonly gone = signal(false);
  private readonly dialogProblems = signal<readonly ApiProblem[]>([]);

  readonly node = computed(() => this.query.data()?.node ?? null);
  readonly loading = computed(() => this.query.loading() && this.query.data() === undefined);
  readonly problems = this.query.problems;
  /** The action being sent, for busy buttons. */
  readonly busy = this.running.asReadonly();
  /** The record was deleted (here or elsewhere). */
  readonly deleted = this.gone.asReadonly();
  /** Node changes and install progress are both arriving. */
  readonly live = computed(() => this.nodeChanges.live() && this.progress.live());
  readonly liveProblems = computed(() => [...this.nodeChanges.problems(), ...this.progress.problems()]);
  /** The API's field problems of the last credentials or host-key action (`password`, `privateKey`, `fingerprint` …). */
  readonly fieldErrors = computed(() => fieldProblems(this.dialogProblems(), fieldProblemText(this.i18n)));

  /** Every run of the node, oldest first; a run started since the page loaded is included. */
  readonly runs = this.installRuns.runs;
  readonly currentRun = this.installRuns.currentRun;
  /** Earlier runs, newest first. */
  readonly previousRuns = this.installRuns.previousRuns;
  readonly currentEvents = this.installRuns.currentEvents;

  constructor() {
    effect((onCleanup) => {
      if (!this.currentRun()?.placeInLine) {
        return;
      }
      const timer = setInterval(() => this.query.refetch(), PLACE_IN_LINE_REFRESH_MS);
      onCleanup(() => clearInterval(timer));
    });
  }

  select(clusterId: string, nodeId: string): void {
    if (nodeId !== this.nodeId) {
      this.nodeId = nodeId;
      this.installRuns.follow(nodeId);
      this.gone.set(false);
      this.query.watch({ id: nodeId });
      // On a reconnect graphql-ws subscribes again and the first message repeats every event; merging by seq drops the repeats.
      this.progress.start({ nodeId }, { next: ({ installProgress }) => this.installRuns.apply(installProgress) });
    }
    // Same variables: nothing happens; another cluster (a corrected link): subscribed anew. The first
    // message is the node as it is now, so a change between the query and the subscription still shows.
    this.nodeChanges.start(
      { clusterId, nodeId },
      {
        next: ({ nodeChanged }) => {
          if (nodeChanged.nodeId !== this.nodeId) {
            return;
          }
          if (!nodeChanged.node) {
            this.gone.set(true);
            return;
          }
          // Apollo merged the node's own fields already; facts and runs change with its status.
          this.query.refetch();
        },
        reconnected: () => this.query.refetch(),
      },
    );
  }

  reload(): void {
    this.query.refetch();
    this.nodeChanges.restart();
    this.progress.restart();
  }

  eventsOf(runId: string): readonly StepEventView[] {
    return this.installRuns.eventsOf(runId);
  }

  hasEventsOf(runId: string): boolean {
    return this.installRuns.hasEventsOf(runId);
  }

  isLoadingRun(runId: string): boolean {
    return this.runsLoading().has(runId);
  }

  /** Fetches an earlier run's events (the live stream only carries the latest run's). */
  async loadRun(runId: string): Promise<void> {
    if (this.installRuns.hasEventsOf(runId) || this.runsLoading().has(runId)) {
      return;
    }
    this.runsLoading.update((ids) => new Set(ids).add(runId));
    try {
      // The API answers a run's log a page at a time; a page shorter than asked is the last.
      for (let after = 0; ; ) {
        const result = await firstValueFrom(this.apollo.query({ query: InstallRunDocument, variables: { id: runId, after }, fetchPolicy: 'network-only' }));
        const run = result.data?.installRun;
        if (!run) {
          break;
        }
        this.installRuns.record(run.id, run.events);
        const last = run.events.at(-1)?.seq;
        if (run.events.length < EVENTS_PAGE || last === undefined) {
          break;
        }
        after = last;
      }
    } catch {
      // The error link showed it; the section offers loading again.
    } finally {
      this.runsLoading.update((ids) => {
        const next = new Set(ids);
        next.delete(runId);
        return next;
      });
    }
  }

  clearDialogProblems(): void {
    this.dialogProblems.set([]);
  }

  /** 安装节点: starts the agent on a READY_TO_INSTALL node. */
  install(): Promise<Outcome<InstallRunView>> {
    return this.startRun('install', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: InstallNodeDocument, variables: { nodeId } }));
      return { value: result.data?.installNode, error: result.error };
    });
  }

  /** A new run that resumes at the first step that did not succeed. */
  retry(): Promise<Outcome<InstallRunView>> {
    return this.startRun('retry', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: RetryInstallDocument, variables: { nodeId } }));
      return { value: result.data?.retryInstall, error: result.error };
    });
  }

  cancel(): Promise<Outcome<InstallRunView>> {
    return this.perform('cancel', 'toast', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: CancelInstallDocument, variables: { nodeId } }));
      return { value: result.data?.cancelInstall, error: result.error };
    });
  }

  /** Runs the cleanup a CLEANABLE verdict lists (the operator confirmed it); then the node may be installed. */
  cleanHost(): Promise<Outcome<NodeSummary>> {
    return this.perform('clean', 'toast', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: CleanHostDocument, variables: { nodeId } }));
      return { value: result.data?.cleanHost, error: result.error };
    });
  }

  recopyAgent(): Promise<Outcome<NodeSummary>> {
    return this.perform('recopy', 'toast', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: RecopyAgentDocument, variables: { nodeId } }));
      return { value: result.data?.recopyAgent, error: result.error };
    });
  }

  /** Reads the host's facts again over SSH; the node's facts (and what changed) come back with it. */
  reinspectHost(): Promise<Outcome<{ readonly id: string }>> {
    return this.perform('reinspect', 'toast', async (nodeId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: ReinspectHostDocument, variables: { nodeId } }));
      return { value: result.data?.reinspectHost, error: result.error };
    });
  }

  /** New SSH credentials; the caller drops the password or key whatever the outcome. */
  updateCredentials(input: SshCredentialsInput): Promise<Outcome<NodeSummary>> {
    return this.perform('credentials', 'fields', async (nodeId) => {
      const result = await firstValueFrom(
        this.apollo.mutate({ mutation: UpdateNodeCredentialsDocument, variables: { nodeId, input }, context: { errorDisplay: 'fields' } }),
      );
      return { value: result.data?.updateNodeCredentials, error: result.error };
    });
  }

  /** Trusts the host key the host now presents (ADMIN); `fingerprint` repeats the one the user confirmed. */
  acceptHostKey(fingerprint: string): Promise<Outcome<NodeSummary>> {
    return this.perform('acceptHostKey', 'fields', async (nodeId) => {
      const result = await firstValueFrom(
        this.apollo.mutate({ mutation: AcceptHostKeyDocument, variables: { nodeId, fingerprint }, context: { errorDisplay: 'fields' } }),
      );
      return { value: result.data?.acceptHostKey, error: result.error };
    });
  }

  /** Forgets a node that never joined (or was removed); it leaves the cluster's node list at once. */
  async deleteRecord(): Promise<Outcome<{ readonly id: string; readonly hostname: string }>> {
    const outcome = await this.perform('delete', 'toast', async (nodeId) => {
      const result = await firstValueFrom(
        this.apollo.mutate({
          mutation: DeleteNodeRecordDocument,
          variables: { nodeId },
          update: (cache, { data }) => {
            const deleted = data?.deleteNodeRecord;
            if (deleted) {
              dropFromNodeList(cache, deleted.clusterId, deleted.id);
            }
          },
        }),
      );
      return { value: result.data?.deleteNodeRecord, error: result.error };
    });
    if (outcome.ok) {
      this.gone.set(true);
    }
    return outcome;
  }

  private async startRun(action: NodeAction, send: Send<InstallRunView>): Promise<Outcome<InstallRunView>> {
    const outcome = await this.perform(action, 'toast', send);
    if (outcome.ok) {
      this.installRuns.started(outcome.value);
    }
    return outcome;
  }

  /** Sends one mutation for the selected node; `display` says who shows its errors (see ErrorDisplay). */
  private async perform<V>(action: NodeAction, display: 'toast' | 'fields', send: Send<V>): Promise<Outcome<V>> {
    const nodeId = this.nodeId;
    if (!nodeId) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no node selected', field: null }] };
    }
    this.running.set(action);
    if (display === 'fields') {
      this.dialogProblems.set([]);
    }
    try {
      const { value, error } = await send(nodeId);
      if (!value) {
        return this.failed(display, problemsOf(error));
      }
      // The answer shows the node as the mutation left it, and may reach the cache after a
      // nodeChanged message about what happened next (a changed host key a few ms later):
      // asking again leaves the newest state last.
      if (action !== 'delete') {
        this.query.refetch();
      }
      return { ok: true, value };
    } catch (error) {
      return this.failed(display, problemsOf(error));
    } finally {
      this.running.set(null);
    }
  }

  private failed<V>(display: 'toast' | 'fields', problems: readonly ApiProblem[]): Outcome<V> {
    if (display === 'fields') {
      this.dialogProblems.set(problems);
    }
    return { ok: false, problems };
  }
}

function dropFromNodeList(cache: ApolloCache, clusterId: string, nodeId: string): void {
  cache.updateQuery({ query: NodesDocument, variables: { clusterId } }, (existing) =>
    existing ? { nodes: existing.nodes.filter((node) => node.id !== nodeId) } : existing,
  );
}
