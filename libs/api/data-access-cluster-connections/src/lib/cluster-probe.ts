import type { CodedText } from '@ccos/shared/messages';
/** What the service asks the cluster about a node being installed. */
export interface ClusterProbe {
  /** Whether the Node object exists and is Ready. */
  nodeState(clusterId: string, nodeName: string): Promise<{ registered: boolean; ready: boolean }>;
  /** Names of this node's CSRs waiting for approval. */
  pendingCsrNames(clusterId: string, nodeName: string): Promise<string[]>;
  /** Other Nodes of the cluster that already use this name or IP (a sentence each, or null). */
  conflicts(clusterId: string, nodeName: string, ip: string | null): Promise<{ hostname: CodedText | null; ip: CodedText | null }>;
}
