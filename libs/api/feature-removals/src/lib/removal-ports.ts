import type { V1Pod } from '@kubernetes/client-node';
import type { NodeEntity } from '@ccos/api/data-access-db';
import type { KubeClient, NodeSummary } from '@ccos/api/data-access-kube';
import type { SshTarget } from '@ccos/api/data-access-ssh';

/** What removals read of a cluster's connection: its client and watch caches. */
export interface ClusterView {
  readonly client: KubeClient;
  nodes(): NodeSummary[];
  /** The node's pods from the watch cache, or null until it has its first list. */
  podsOnNode(nodeName: string): V1Pod[] | null;
}

/**
 * A cluster's API client and its Node and Pod caches. data-access-cluster-connections'
 * ClusterConnections provides it: the watches it keeps per registered cluster are reused instead
 * of opening others.
 */
export interface ClusterAccess {
  /** The cluster's watch once listed; answers CLUSTER_UNREACHABLE within a few seconds when the API server does not answer. */
  watch(clusterId: string): Promise<ClusterView>;
  /**
   * A bounded read against the API server: `run` gets a signal that aborts when the read takes
   * too long; a cluster that does not answer (now, or recently) answers CLUSTER_UNREACHABLE.
   */
  read<T>(clusterId: string, run: (cluster: ClusterView, signal: AbortSignal) => Promise<T>): Promise<T>;
}

/** The node's leftover CSRs; feature-csrs' CsrService provides it (denials are recorded in csr_decisions). */
export interface CsrLeftovers {
  /** Names of the node's pending CSRs (client and serving). */
  pendingCsrNamesFor(clusterId: string, nodeName: string): Promise<string[]>;
  deny(clusterId: string, name: string, actor: string, reason: string): Promise<unknown>;
}

/** How to log in to a node's host: null when no SSH access is recorded (a discovered node). */
export type HostAccess = (node: NodeEntity) => SshTarget | null;

/** Told what removals did, for metrics; each fact by the one replica that executed it. */
export interface RemovalObserver {
  /** A run ended (the update that ended it was this replica's). */
  runFinished(outcome: 'SUCCEEDED' | 'FAILED' | 'CANCELLED'): void;
  /** The Eviction API answered 429 for one of the cluster's pods: a PodDisruptionBudget allows no disruption now. */
  evictionRefused(clusterId: string): void;
}
