import type { Logger } from 'pino';
import type { ClusterProbe } from '@ccos/api/data-access-cluster-connections';
import type { ClusterStore, InstallRunStore, JobRegistry, NodeBatchStore, NodeStore } from '@ccos/api/data-access-db';
import type { AgentBinary } from '@ccos/api/data-access-hosts';
import type { ClusterAddressGuard } from '@ccos/api/data-access-kube';
import type { SshPool } from '@ccos/api/data-access-ssh';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type ClusterLeftoverCleaner, HostCleanupService } from './host-cleanup.service';
import type { BatchInstalls, InstallReadiness } from './install-ports';
import { NodeBatchService } from './node-batch.service';
import { NodeHealthChecks } from './node-health-checks';
import { type ClusterList, type ClusterNodeWatches, NodeInventorySync } from './node-inventory-sync';
import { NodeProvisioner } from './node-provisioner';
import { type HostStatesOf, NO_HOST_STATES, NodeViews } from './node.mapper';
import { type NodeObjectMarks, NodeService } from './node.service';

export interface NodeFeatureOptions {
  /** The cluster records, for the cluster a host is added to. */
  readonly clusterRecords: ClusterStore;
  readonly nodes: NodeStore;
  readonly batches: NodeBatchStore;
  /** The install runs, for the step each installing host of a batch is at. */
  readonly runs: InstallRunStore;
  readonly secrets: SecretBox;
  readonly ssh: SshPool;
  /** The agent executable copied to hosts; null while it is not built. */
  readonly agent: () => AgentBinary | null;
  /** The cluster side of the add-time checks (a Node already using the host's name or IP). */
  readonly cluster: ClusterProbe;
  /** Each cluster's Node watch (data-access-cluster-connections' ClusterConnections), for the inventory. */
  readonly watches: ClusterNodeWatches;
  /** The registered clusters, whose Nodes the inventory follows. */
  readonly clusters: ClusterList;
  /** Ends a host's leftovers in its cluster (its old Node, its pending CSRs) when it is cleaned. */
  readonly leftovers: ClusterLeftoverCleaner;
  /** Installs the hosts of a batch (feature-installs' BatchInstaller). */
  readonly installs: BatchInstalls;
  /** Refuses a batch install up front when the cluster's artifact set is incomplete. */
  readonly installReadiness: InstallReadiness;
  /** How many hosts of one batch are added and installed at once, unless the batch says. */
  readonly batchConcurrency: number;
  /** Node roles an OPERATOR may give besides worker (ALLOW_NODE_ROLES); others need an ADMIN and a reason. */
  readonly allowedNodeRoles?: readonly string[];
  /** Which SSH targets may be entered (ALLOW_CLUSTER_ADDRESSES, the same guard as for clusters); the pool checks them again on every connection. */
  readonly addresses: ClusterAddressGuard;
  /** The durable jobs a node's provisioning and its host's health checks run as. */
  readonly jobs: JobRegistry;
  /** How often every member's host is checked over SSH. */
  readonly healthCheckIntervalMs: number;
  /** What each node's host runs against its install's record (feature-fleet), for the nodes the API answers; none without. */
  readonly hostStates?: HostStatesOf;
  /** Writes managed labels and taints onto joined nodes' Node objects; without it their changes are refused. */
  readonly nodeObjects?: NodeObjectMarks;
  readonly logger: Logger;
}

/** The node feature as the composition root sees it. */
export interface NodeFeature {
  readonly service: NodeService;
  /** Nodes as the API answers them. */
  readonly views: NodeViews;
  /** The background half of addNode: connect, check the host, copy the agent. */
  readonly provisioner: NodeProvisioner;
  readonly batches: NodeBatchService;
  readonly hostCleanup: HostCleanupService;
  /** The host side of members' health (SSH reachable, the kubelet unit active). */
  readonly healthChecks: NodeHealthChecks;
  /** Follows every registered cluster's Nodes into the inventory, and checks members' hosts every interval. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createNodeFeature(options: NodeFeatureOptions): NodeFeature {
  const { clusterRecords, nodes, secrets, ssh, agent, logger } = options;
  const provisioner = new NodeProvisioner(nodes, secrets, ssh, agent, options.jobs, logger, options.cluster, clusterRecords);
  const inventorySync = new NodeInventorySync(nodes, options.watches, options.clusters, logger);
  const healthChecks = new NodeHealthChecks(nodes, secrets, ssh, options.jobs, options.healthCheckIntervalMs, logger);
  return {
    service: new NodeService(clusterRecords, nodes, secrets, provisioner, agent, options.allowedNodeRoles, options.addresses, options.nodeObjects ?? null),
    views: new NodeViews(options.hostStates ?? NO_HOST_STATES),
    provisioner,
    batches: new NodeBatchService(clusterRecords, nodes, options.batches, options.runs, secrets, provisioner, agent, options.installs, options.batchConcurrency, options.installReadiness, options.allowedNodeRoles, options.addresses),
    hostCleanup: new HostCleanupService(nodes, secrets, ssh, options.leftovers, options.jobs, logger),
    healthChecks,
    async start() {
      await inventorySync.start();
      healthChecks.start();
    },
    async stop() {
      healthChecks.stop();
      await inventorySync.stop();
    },
  };
}
