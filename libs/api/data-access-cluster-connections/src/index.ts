export {
  ClusterConnections,
  type ClusterConnectionsOptions,
  type ClusterDirectory,
  type ClusterWatch,
  type CsrEventListener,
  type CsrPendingSummary,
  type NodeEventListener,
  type PodEventListener,
} from './lib/cluster-connections';
export type { ClusterProbe } from './lib/cluster-probe';
