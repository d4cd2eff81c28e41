import { computed, signal } from '@angular/core';
import { type SequencedEvent, mergeRunEvents } from './run-events';

/** A run of a node (an install run, a removal run). */
export interface NodeRun {
  readonly id: string;
  readonly nodeId: string;
}

/** A progress subscription's message: the run as it is now and events of it (every event so far in the first message after subscribing). */
export interface RunProgress<R extends NodeRun, E extends SequencedEvent> {
  readonly nodeId: string;
  readonly run: R | null | undefined;
  readonly events: readonly E[];
}

/**
 * A node's runs of one kind, oldest first, and each run's ordered event log: the runs a
 * query lists, plus one started since (by this page or elsewhere, known from a progress
 * message or a mutation's answer); the events a query listed or fetched merged with those
 * that arrived live, by seq (see {@link mergeRunEvents}). A store keeps one per kind of run
 * and calls {@link follow} when its node changes.
 */
export class NodeRuns<R extends NodeRun, E extends SequencedEvent> {
  private nodeId: string | null = null;
  private readonly latestRun = signal<R | null>(null);
  private readonly logs = signal<ReadonlyMap<string, readonly E[]>>(new Map());

  /** Every run, oldest first. */
  readonly runs = computed<readonly R[]>(() => {
    const listed = this.listed();
    const latest = this.latestRun();
    if (!latest || latest.nodeId !== this.nodeId || listed.some((run) => run.id === latest.id)) {
      return listed;
    }
    return [...listed, latest];
  });
  readonly currentRun = computed(() => this.runs().at(-1) ?? null);
  /** Earlier runs, newest first. */
  readonly previousRuns = computed(() => this.runs().slice(0, -1).reverse());
  readonly currentEvents = computed(() => {
    const run = this.currentRun();
    return run ? this.eventsOf(run.id) : [];
  });

  /**
   * @param listed the runs a query lists, oldest first
   * @param listedEventsOf the events that query lists with a run, if it lists them
   */
  constructor(
    private readonly listed: () => readonly R[],
    private readonly listedEventsOf: (runId: string) => readonly E[] = () => [],
  ) {}

  /** Starts over for another node: what was known of the last one's runs is dropped. */
  follow(nodeId: string): void {
    this.nodeId = nodeId;
    this.latestRun.set(null);
    this.logs.set(new Map());
  }

  /** The run's events in seq order, each once. */
  eventsOf(runId: string): readonly E[] {
    return mergeRunEvents(this.listedEventsOf(runId), this.logs().get(runId) ?? []);
  }

  /** Whether events of the run were fetched, arrived live, or the run was started here (its log is then known to be empty so far). */
  hasEventsOf(runId: string): boolean {
    return this.logs().has(runId);
  }

  /** A progress message: the run becomes current; a message about another node is ignored. */
  apply(progress: RunProgress<R, E>): void {
    const run = progress.run;
    if (!run || progress.nodeId !== this.nodeId) {
      return;
    }
    this.latestRun.set(run);
    this.record(run.id, progress.events);
  }

  /** A run this page started: current at once, its events to follow. */
  started(run: R): void {
    this.latestRun.set(run);
    this.logs.update((logs) => (logs.has(run.id) ? logs : new Map(logs).set(run.id, [])));
  }

  /** Events of a run, fetched or arrived. */
  record(runId: string, events: readonly E[]): void {
    this.logs.update((logs) => {
      const log = logs.get(runId);
      const merged = mergeRunEvents(log ?? [], events);
      return merged === log ? logs : new Map(logs).set(runId, merged);
    });
  }
}
