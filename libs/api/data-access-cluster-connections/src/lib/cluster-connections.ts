import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ClusterEntity } from '@ccos/api/data-access-db';
import {
  type ClusterVersionReading, type CsrEvent, type CsrSummary, type CsrWatch, type InformerOptions, type KubeClient, type KubeClientOptions, type KubeCredentials, type NodeEvent, type NodeInventory, type NodeSummary,
  type PodEvent, type PodWatch, CsrRequestCache, KubeApiError, createKubeClient, readClusterVersion, watchCsrs, watchNodes, watchPods,
} from '@ccos/api/data-access-kube';
import { AppError } from '@ccos/api/util-graphql';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import { type ClusterOutage, ClusterReachability } from './cluster-reachability';

/** What the connections need of the registered clusters; ClusterService provides it. */
export interface ClusterDirectory {
  get(id: string): Promise<ClusterEntity>;
  list(): Promise<ClusterEntity[]>;
  credentialsOf(cluster: ClusterEntity): KubeCredentials;
  /** How to connect to the cluster: URL, credentials, transport and address rules. */
  clientOptionsOf(cluster: ClusterEntity): KubeClientOptions;
}

/** One cluster's CSRs, Nodes and scheduled pods, kept current by watches. */
export interface ClusterWatch {
  readonly clusterId: string;
  readonly client: KubeClient;
  csrs(): CsrSummary[];
  csr(name: string): CsrSummary | undefined;
  /** The CSR requests the watch has parsed (by UID), for summarising a decision's answer without parsing again. */
  readonly csrRequests: CsrRequestCache;
  nodes(): NodeSummary[];
  /**
   * The node's pods from the pod watch cache (the fields `podForPlanning` keeps), or null until
   * that cache has its first list (then the caller lists them itself).
   */
  podsOnNode(nodeName: string): V1Pod[] | null;
}

/** A cluster's pending CSRs, as its watch cache has them. */
export interface CsrPendingSummary {
  readonly clusterId: string;
  readonly clusterName: string;
  readonly pending: number;
  /** Epoch ms of the oldest pending CSR's creationTimestamp; null when none is pending. */
  readonly oldestCreatedAt: number | null;
}

/** Told about every CSR change of every watched cluster, in the API's order per cluster. */
export type CsrEventListener = (clusterId: string, event: CsrEvent) => void;

/** Told about every Node change of every watched cluster (not heartbeats), in the API's order per cluster. */
export type NodeEventListener = (clusterId: string, event: NodeEvent) => void;

/** Told about every change of a scheduled pod of every watched cluster, in the API's order per cluster. */
export type PodEventListener = (clusterId: string, event: PodEvent) => void;

export interface ClusterConnectionsOptions {
  /**
   * How long a read waits for a cluster that has not answered yet (first list, or reconnecting
   * after a failure), and how long a direct read ({@link ClusterConnections.read}) may take, before it
   * answers CLUSTER_UNREACHABLE. Default 2 s.
   */
  readTimeoutMs?: number;
  /** How long a cluster that did not answer is answered from memory before a read tries it again. Default 5 s. */
  retryUnreachableAfterMs?: number;
  informer?: InformerOptions;
}

type WatchSource = 'csrs' | 'nodes' | 'pods';

interface Running {
  readonly clusterName: string;
  readonly watch: ClusterWatch;
  readonly synced: Promise<void>;
  readonly podsSynced: Promise<void>;
  lastError: Error | null;
  /** CSRs and Nodes listed, and no watch failing since it last heard from the API server. */
  healthy(): boolean;
  /** Resolves the next time {@link healthy} becomes true (at once when it is). */
  untilHealthy(): Promise<void>;
  retryNow(): void;
  stop(): Promise<void>;
}

/** An error of this service's own (a read that timed out), with its text by code. */
class CodedError extends Error {
  constructor(readonly text: CodedText) {
    super(text.message);
  }
}

/** The cluster's answer was an error (it is up); anything else means it was not reached. */
function answeredWithError(error: Error): boolean {
  return error instanceof KubeApiError && error.kind === 'status';
}

/**
 * Each cluster's connection: its client and watch cache, one CSR, one Node and one Pod watch per
 * cluster, started when a cluster is first asked about and kept until shutdown. Every CSR and
 * Node change is handed to local listeners (the CSR feature, which publishes `CSR_CHANGED`, the
 * auto-approver, the node inventory), so nothing here polls. The pod cache (scheduled pods,
 * indexed by node) serves removal previews. It is a cache only: the cluster counts as answering
 * before it is listed (pods are many, CSR reads should not wait for them), and a failing pod watch
 * (a role from before the watch was granted, say) leaves the cluster healthy; until it recovers
 * `podsOnNode` answers null and previews list the node's pods as before.
 */
export class ClusterConnections {
  private readonly running = new Map<string, Running>();
  private readonly listeners = new Set<CsrEventListener>();
  private readonly nodeListeners = new Set<NodeEventListener>();
  private readonly podListeners = new Set<PodEventListener>();
  private readonly reachability: ClusterReachability;
  private readonly readTimeoutMs: number;
  private closed = false;

  constructor(
    private readonly clusters: ClusterDirectory,
    private readonly logger: Logger,
    private readonly options: ClusterConnectionsOptions = {},
  ) {
    this.reachability = new ClusterReachability({ retryAfterMs: options.retryUnreachableAfterMs });
    this.readTimeoutMs = options.readTimeoutMs ?? 2_000;
  }

  /** Subscribes to CSR changes of all watched clusters; returns the unsubscribe function. */
  onCsrEvent(listener: CsrEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Subscribes to Node changes of all watched clusters (the node inventory); returns the unsubscribe function. */
  onNodeEvent(listener: NodeEventListener): () => void {
    this.nodeListeners.add(listener);
    return () => this.nodeListeners.delete(listener);
  }

  /** Subscribes to changes of scheduled pods of all watched clusters; returns the unsubscribe function. */
  onPodEvent(listener: PodEventListener): () => void {
    this.podListeners.add(listener);
    return () => this.podListeners.delete(listener);
  }

  /**
   * Pending CSRs of every cluster whose watches are current (listed and not failing), from the
   * watch cache: the cluster's own state, so every replica reports the same. A cluster whose
   * watch is not current is left out rather than reported as having none.
   */
  pendingCsrs(): CsrPendingSummary[] {
    const summaries: CsrPendingSummary[] = [];
    for (const [clusterId, running] of this.running) {
      if (!running.healthy()) {
        continue;
      }
      const created = running.watch
        .csrs()
        .filter((csr) => csr.state === 'Pending')
        .map((csr) => (csr.createdAt ? Date.parse(csr.createdAt) : Number.NaN));
      const known = created.filter((at) => Number.isFinite(at));
      summaries.push({ clusterId, clusterName: running.clusterName, pending: created.length, oldestCreatedAt: known.length > 0 ? Math.min(...known) : null });
    }
    return summaries;
  }

  /** The cluster's Kubernetes version, asked of its API server (which artifact set it uses). */
  async version(clusterId: string, signal?: AbortSignal): Promise<ClusterVersionReading> {
    return readClusterVersion((await this.ensure(clusterId)).client, signal);
  }

  /** Starts watching a cluster unless it is watched already; does not wait for the first list. */
  async ensure(clusterId: string): Promise<ClusterWatch> {
    return (await this.start(clusterId)).watch;
  }

  /** Resolves once the cluster's first lists arrived (never rejects; waits as long as it takes). */
  async synced(clusterId: string): Promise<void> {
    await (await this.start(clusterId)).synced;
  }

  /** Resolves once the cluster's pod cache has its first list (until then `podsOnNode` answers null). */
  async podsSynced(clusterId: string): Promise<void> {
    await (await this.start(clusterId)).podsSynced;
  }

  /**
   * The cluster's watch, for a read. A cluster remembered as down answers CLUSTER_UNREACHABLE
   * (UNAVAILABLE when it answered with an error) at once; otherwise a cluster not yet listed, or
   * reconnecting after a failure, gets `readTimeoutMs` to answer. Either way a read is bounded.
   */
  async watch(clusterId: string): Promise<ClusterWatch> {
    const running = await this.start(clusterId);
    const remembered = this.reachability.outage(clusterId);
    if (remembered) {
      throw this.outageError(clusterId, running, remembered);
    }
    if (running.healthy()) {
      this.reachability.answered(clusterId);
      return running.watch;
    }
    running.retryNow();
    const timeoutMs = this.readTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      if ((await Promise.race([running.untilHealthy().then(() => 'healthy' as const), timedOut])) === 'timeout') {
        const outage = this.reachability.failed(clusterId, running.lastError ?? new CodedError(message('cluster.outage.noFirstList', { seconds: timeoutMs / 1000 })));
        throw this.outageError(clusterId, running, outage);
      }
    } finally {
      clearTimeout(timer);
    }
    return running.watch;
  }

  /**
   * A read that goes to the API server (not only the watch cache), bounded like {@link watch}:
   * `run` gets a signal that aborts after `readTimeoutMs`; a cluster that does not answer in
   * time, or cannot be reached, is remembered as down and the read answers CLUSTER_UNREACHABLE.
   * Errors the API server answered with, and the caller's own, pass through.
   */
  async read<T>(clusterId: string, run: (watch: ClusterWatch, signal: AbortSignal) => Promise<T>): Promise<T> {
    const watch = await this.watch(clusterId);
    const signal = AbortSignal.timeout(this.readTimeoutMs);
    try {
      const result = await run(watch, signal);
      this.reachability.answered(clusterId);
      return result;
    } catch (error) {
      const unreached = error instanceof KubeApiError && (error.kind === 'network' || error.kind === 'timeout' || (error.kind === 'aborted' && signal.aborted));
      if (!unreached) {
        throw error;
      }
      const cause = error.kind === 'aborted' ? new CodedError(message('cluster.outage.readTimeout', { operation: error.operation, seconds: this.readTimeoutMs / 1000 })) : error;
      const running = await this.start(clusterId);
      throw this.outageError(clusterId, running, this.reachability.failed(clusterId, cause));
    }
  }

  /** Stops every watch. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.running.values()];
    this.running.clear();
    await Promise.all(all.map((running) => running.stop()));
  }

  private async start(clusterId: string): Promise<Running> {
    const existing = this.running.get(clusterId);
    if (existing) {
      return existing;
    }
    const cluster = await this.clusters.get(clusterId);
    // Checked again: another request may have started it while the cluster was read.
    const raced = this.running.get(clusterId);
    if (raced) {
      return raced;
    }
    if (this.closed) {
      throw new AppError('UNAVAILABLE', message('service.shuttingDown'));
    }
    let client: KubeClient;
    try {
      client = createKubeClient(this.clusters.clientOptionsOf(cluster));
    } catch (error) {
      throw new AppError('FAILED_PRECONDITION', message('cluster.clientOptions', { cluster: cluster.name, error: (error as Error).message }), { clusterId }, error);
    }
    const log = this.logger.child({ component: 'cluster-connection', clusterId });
    const state: { lastError: Error | null; synced: boolean; failures: Map<WatchSource, Error>; waiting: Array<() => void> } = { lastError: null, synced: false, failures: new Map(), waiting: [] };
    const healthy = (): boolean => state.synced && state.failures.size === 0;
    const wakeIfHealthy = (): void => {
      if (healthy()) {
        state.lastError = null;
        this.reachability.answered(clusterId);
        const waiting = state.waiting;
        state.waiting = [];
        for (const wake of waiting) {
          wake();
        }
      }
    };
    const podWatchFailing = { now: false };
    const informerFor = (source: WatchSource): InformerOptions => ({
      ...this.options.informer,
      onError: (error, retryInMs) => {
        this.options.informer?.onError?.(error, retryInMs);
        if (source === 'pods') {
          podWatchFailing.now = true;
          log.warn({ err: error, retryInMs }, 'pod watch failed; removal previews list pods until it recovers');
          return;
        }
        // A listener that threw is this service's problem, not the cluster's.
        if (error instanceof KubeApiError) {
          state.lastError = error;
          state.failures.set(source, error);
          this.reachability.failed(clusterId, error);
        }
        log.warn({ err: error, retryInMs, source }, 'watch failed; retrying');
      },
      onHealthy: () => {
        this.options.informer?.onHealthy?.();
        if (source === 'pods') {
          podWatchFailing.now = false;
        }
        if (state.failures.delete(source)) {
          log.info({ source }, 'watch reconnected');
        }
        wakeIfHealthy();
      },
    });
    const csrRequests = new CsrRequestCache();
    const csrWatch: CsrWatch = watchCsrs(client, (event) => this.deliver(clusterId, event), informerFor('csrs'), csrRequests);
    const nodeWatch: NodeInventory = watchNodes(client, (event) => this.deliverNode(clusterId, event), informerFor('nodes'));
    const podWatch: PodWatch = watchPods(client, (event) => this.deliverPod(clusterId, event), informerFor('pods'));
    const synced = Promise.all([csrWatch.synced, nodeWatch.synced]).then(() => {
      state.synced = true;
      wakeIfHealthy();
    });
    const running: Running = {
      clusterName: cluster.name,
      watch: {
        clusterId,
        client,
        csrs: () => csrWatch.csrs(),
        csr: (name) => csrWatch.csr(name),
        csrRequests,
        nodes: () => nodeWatch.nodes(),
        podsOnNode: (nodeName) => (podWatch.isSynced() && !podWatchFailing.now ? podWatch.podsOnNode(nodeName) : null),
      },
      synced,
      podsSynced: podWatch.synced,
      get lastError() {
        return state.lastError;
      },
      set lastError(value) {
        state.lastError = value;
      },
      healthy,
      untilHealthy: () => (healthy() ? Promise.resolve() : new Promise<void>((resolve) => state.waiting.push(resolve))),
      retryNow() {
        csrWatch.retryNow();
        nodeWatch.retryNow();
        podWatch.retryNow();
      },
      async stop() {
        await Promise.all([csrWatch.stop(), nodeWatch.stop(), podWatch.stop()]);
        client.close();
        const waiting = state.waiting;
        state.waiting = [];
        for (const wake of waiting) {
          wake();
        }
      },
    };
    this.running.set(clusterId, running);
    log.debug({ server: client.server }, 'watching CSRs, Nodes and pods');
    return running;
  }

  /** CLUSTER_UNREACHABLE for an outage (UNAVAILABLE when the cluster answered with an error), saying what happened and when the next try is. */
  private outageError(clusterId: string, running: Running, outage: ClusterOutage): AppError {
    const now = Date.now();
    const retryInSeconds = Math.max(0, Math.ceil((outage.retryAt - now) / 1000));
    const downFor = Math.max(0, Math.round((now - outage.since) / 1000));
    const status = answeredWithError(outage.error);
    const error = outage.error instanceof CodedError ? bare(outage.error.text) : outage.error.message;
    return new AppError(
      status ? 'UNAVAILABLE' : 'CLUSTER_UNREACHABLE',
      message(status ? 'cluster.outage.errorAnswer' : 'cluster.outage.unreachable', { cluster: running.clusterName, error, downFor, retryIn: retryInSeconds }),
      { clusterId, retryInSeconds },
    );
  }

  private deliverNode(clusterId: string, event: NodeEvent): void {
    for (const listener of this.nodeListeners) {
      try {
        listener(clusterId, event);
      } catch (error) {
        this.logger.error({ err: error, clusterId, node: event.node.name }, 'a Node listener failed');
      }
    }
  }

  private deliverPod(clusterId: string, event: PodEvent): void {
    for (const listener of this.podListeners) {
      try {
        listener(clusterId, event);
      } catch (error) {
        this.logger.error({ err: error, clusterId, pod: `${event.object.metadata?.namespace ?? ''}/${event.object.metadata?.name ?? ''}` }, 'a Pod listener failed');
      }
    }
  }

  private deliver(clusterId: string, event: CsrEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(clusterId, event);
      } catch (error) {
        this.logger.error({ err: error, clusterId, csr: event.csr.name }, 'a CSR listener failed');
      }
    }
  }
}
