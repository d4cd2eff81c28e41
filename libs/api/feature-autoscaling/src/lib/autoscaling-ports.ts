import type { Label, Taint } from '@ccos/shared/domain';

/** A host to add as a spare: what addNode takes (its checks run unchanged). */
export interface SpareHost {
  readonly clusterId: string;
  readonly hostname: string;
  readonly ip: string;
  readonly sshPort: number;
  readonly sshUser: string;
  readonly password?: string | null;
  readonly privateKey?: string | null;
  readonly passphrase?: string | null;
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
}

/**
 * What the autoscaling feature needs of the others; the composition root wires feature-nodes
 * (addNode, its provisioner, the batch install) and feature-removals (the removal run) in.
 */
/** How a removal the group starts goes. */
export interface RemovalStart {
  /** The removal goes on without the host (it does not answer), for this reason: the node is marked reinstall required. */
  readonly skipHostSide?: string;
}

export interface AutoscalingPorts {
  /** addNode: validation, duplicates, sealed credentials, then the background checks; the new node's id. */
  addNode(host: SpareHost): Promise<string>;
  /** Runs addNode's background checks (SSH, host key, facts, agent, dirty-host verdict) for a node record that is ADDING. */
  checkHost(nodeId: string): Promise<void>;
  /**
   * Cleans the leftovers the node's stored verdict lists (feature-nodes' host cleanup: exactly
   * those files, then a fresh scan that must find none of them).
   */
  cleanLeftovers(nodeId: string, actor: string): Promise<void>;
  /** Installs these READY_TO_INSTALL nodes as one batch (the fleet batch install); the batch id. */
  installAsBatch(clusterId: string, nodeIds: readonly string[], actor: string): Promise<string>;
  /** Starts the removal run of a JOINED node (drain, stop kubelet, delete the Node, deny CSRs, revoke tokens, clean the host); the run id. */
  startRemoval(nodeId: string, actor: string, options?: RemovalStart): Promise<string>;
  /** Resolves when the removal run ends; its outcome and reason. */
  removalOutcome(runId: string): Promise<{ readonly status: string; readonly reason: string | null }>;
}

/** Told about every decision, for the metrics. */
export interface AutoscalingObserver {
  decision(kind: string, group: string): void;
}
