import type { Logger } from 'pino';
import type { ClusterEntity } from '@ccos/api/data-access-db';
import {
  type CsrEvent, type CsrSummary, type CsrWatch, type InformerOptions, type KubeClient, type KubeCredentials, type NodeEvent, type NodeInventory, type NodeSummary,
  createKubeClient, watchCsrs, watchNodes,
} from '@ccos/api/data-access-kube';
import { AppError, type CsrChangedPayload, type EventBus, TOPICS } from '@ccos/api/util-graphql';

/** What this feature needs of the registered clusters; ClusterService provides it. */
export interface ClusterDirectory {
  get(id: string): Promise<ClusterEntity>;
  list(): Promise<ClusterEntity[]>;
  credentialsOf(cluster: ClusterEntity): KubeCredentials;
}

/** A CSR_CHANGED payload with the resourceVersion, so subscribers can drop the same change heard twice. */
export interface CsrChangedMessage extends CsrChangedPayload {
  readonly resourceVersion: string;
}

/** One cluster's CSRs and Nodes, kept current by watches. */
export interface ClusterWatch {
  readonly clusterId: string;
  readonly client: KubeClient;
  csrs(): CsrSummary[];
  csr(name: string): CsrSummary | undefined;
  nodes(): NodeSummary[];
}

/** Told about every CSR change of every watched cluster, in the API's order per cluster. */
export type CsrEventListener = (clusterId: string, event: CsrEvent) => void;

/** Told about every Node change of every watched cluster (not heartbeats), in the API's order per cluster. */
export type NodeEventListener = (clusterId: string, event: NodeEvent) => void;

export interface CsrWatchesOptions {
  /** How long a first request waits for the initial list before answering UNAVAILABLE. Default 10 s. */
  syncTimeoutMs?: number;
  informer?: InformerOptions;
}

interface Running {
  readonly watch: ClusterWatch;
  readonly synced: Promise<void>;
  lastError: Error | null;
  stop(): Promise<void>;
}

/**
 * The CSR watch cache: one CSR watch and one Node watch per cluster, started when a cluster
 * is first asked about and kept until shutdown. Every CSR change is published on
 * `CSR_CHANGED` (for csrChanged subscribers on any replica) and handed to local listeners
 * (the auto-approver), so nothing here polls.
 */
export class CsrWatches {
  private readonly running = new Map<string, Running>();
  private readonly listeners = new Set<CsrEventListener>();
  private readonly nodeListeners = new Set<NodeEventListener>();
  private closed = false;

  constructor(
    private readonly clusters: ClusterDirectory,
    private readonly events: EventBus,
    private readonly logger: Logger,
    private readonly options: CsrWatchesOptions = {},
  ) {}

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

  /** Starts watching a cluster unless it is watched already; does not wait for the first list. */
  async ensure(clusterId: string): Promise<ClusterWatch> {
    return (await this.start(clusterId)).watch;
  }

  /** Resolves once the cluster's first lists arrived (never rejects; waits as long as it takes). */
  async synced(clusterId: string): Promise<void> {
    await (await this.start(clusterId)).synced;
  }

  /**
   * The cluster's watch once its first list arrived. Answers UNAVAILABLE (naming the last
   * error) when the API server does not answer in time; the watch keeps trying meanwhile.
   */
  async watch(clusterId: string): Promise<ClusterWatch> {
    const running = await this.start(clusterId);
    const timeoutMs = this.options.syncTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      if ((await Promise.race([running.synced.then(() => 'synced' as const), timedOut])) === 'timeout') {
        throw new AppError('UNAVAILABLE', `the cluster's API server did not answer within ${timeoutMs / 1000} s${running.lastError ? `: ${running.lastError.message}` : ''}`, { clusterId });
      }
    } finally {
      clearTimeout(timer);
    }
    return running.watch;
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
      throw new AppError('UNAVAILABLE', 'the service is shutting down');
    }
    let client: KubeClient;
    try {
      client = createKubeClient({ apiServerUrl: cluster.apiServerUrl, credentials: this.clusters.credentialsOf(cluster) });
    } catch (error) {
      throw new AppError('FAILED_PRECONDITION', `cluster ${cluster.name}: ${(error as Error).message}`, { clusterId }, error);
    }
    const log = this.logger.child({ component: 'csr-watch', clusterId });
    const state: { lastError: Error | null } = { lastError: null };
    const informer: InformerOptions = {
      ...this.options.informer,
      onError: (error, retryInMs) => {
        state.lastError = error;
        log.warn({ err: error, retryInMs }, 'watch failed; retrying');
      },
    };
    const csrWatch: CsrWatch = watchCsrs(client, (event) => this.deliver(clusterId, event), informer);
    const nodeWatch: NodeInventory = watchNodes(client, (event) => this.deliverNode(clusterId, event), informer);
    const running: Running = {
      watch: {
        clusterId,
        client,
        csrs: () => csrWatch.csrs(),
        csr: (name) => csrWatch.csrs().find((csr) => csr.name === name),
        nodes: () => nodeWatch.nodes(),
      },
      synced: Promise.all([csrWatch.synced, nodeWatch.synced]).then(() => {
        state.lastError = null;
      }),
      get lastError() {
        return state.lastError;
      },
      set lastError(value) {
        state.lastError = value;
      },
      async stop() {
        await Promise.all([csrWatch.stop(), nodeWatch.stop()]);
        client.close();
      },
    };
    this.running.set(clusterId, running);
    log.debug({ server: client.server }, 'watching CSRs and Nodes');
    return running;
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

  private deliver(clusterId: string, event: CsrEvent): void {
    const message: CsrChangedMessage = { clusterId, name: event.csr.name, kind: event.type, resourceVersion: event.csr.resourceVersion };
    this.events.publish(TOPICS.CSR_CHANGED, clusterId, message);
    for (const listener of this.listeners) {
      try {
        listener(clusterId, event);
      } catch (error) {
        this.logger.error({ err: error, clusterId, csr: event.csr.name }, 'a CSR listener failed');
      }
    }
  }
}
