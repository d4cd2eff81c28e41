import type { Logger } from 'pino';
import { type NodeEntity, type NodeStore, reasonFields, uniqueViolationOf } from '@ccos/api/data-access-db';
import type { NodeEvent as KubeNodeEvent, NodeSummary } from '@ccos/api/data-access-kube';
import { allowedFrom, inventoryRole } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';

/**
 * The per-cluster Node watches this sync listens to (data-access-cluster-connections'
 * ClusterConnections keeps one per registered cluster; passing it here saves a second watch).
 */
export interface ClusterNodeWatches {
  /** Every Node change of every watched cluster; returns the unsubscribe function. */
  onNodeEvent(listener: (clusterId: string, event: KubeNodeEvent) => void): () => void;
  /** Resolves once the cluster's first lists arrived. */
  synced(clusterId: string): Promise<void>;
  /** The cluster's watch; `nodes()` is the current state of its Nodes. */
  ensure(clusterId: string): Promise<{ nodes(): NodeSummary[] }>;
}

/** The registered clusters, to sync each one at start. */
export interface ClusterList {
  list(): Promise<ReadonlyArray<{ readonly id: string }>>;
}

interface ClusterSync {
  /** Reconcile every Node and record of the cluster (first sync). */
  full: boolean;
  /** Names whose Node changed since the last pass. */
  readonly dirty: Set<string>;
  running: Promise<void> | null;
}

/** The address the inventory shows: the InternalIP, else the first one the kubelet reported. */
function addressOf(node: NodeSummary): string | null {
  return (node.addresses.find((address) => address.type === 'InternalIP') ?? node.addresses.find((address) => address.type !== 'Hostname'))?.address ?? null;
}

/**
 * Keeps the inventory in step with the Nodes of every registered cluster: a Node nobody added
 * here becomes a DISCOVERED record (JOINED); every record follows its Node's role, Ready
 * condition and cordon; a JOINED or DRAIN_FAILED node whose Node object was deleted outside
 * this service becomes REMOVED (NODE_VANISHED). Each cluster is reconciled in full once its
 * watch has listed, then by the names its Node events mention, one pass at a time; a pass
 * reads the watch's current state, so events that arrive late never bring back a Node that is
 * gone. Changes are published by the NodeStore.
 */
export class NodeInventorySync {
  private readonly clusters = new Map<string, ClusterSync>();
  private readonly log: Logger;
  private unsubscribe: (() => void) | null = null;
  private stopped = false;
  /** Resolves on stop, so a pass waiting for a cluster that never answers does not hold the shutdown. */
  private readonly stopping: Promise<void>;
  private signalStop: () => void = () => undefined;

  constructor(
    private readonly store: NodeStore,
    private readonly watches: ClusterNodeWatches,
    private readonly registered: ClusterList,
    logger: Logger,
  ) {
    this.log = logger.child({ component: 'node-inventory-sync' });
    this.stopping = new Promise((resolve) => {
      this.signalStop = resolve;
    });
  }

  /** Listens to Node events and schedules a full sync of every registered cluster. */
  async start(): Promise<void> {
    this.unsubscribe = this.watches.onNodeEvent((clusterId, event) => this.changed(clusterId, event.node.name));
    for (const cluster of await this.registered.list()) {
      this.stateOf(cluster.id);
      this.kick(cluster.id);
    }
  }

  /** Resolves once every pass scheduled so far has run (tests). */
  async idle(): Promise<void> {
    while ([...this.clusters.values()].some((cluster) => cluster.running)) {
      await Promise.all([...this.clusters.values()].map((cluster) => cluster.running));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.signalStop();
    this.unsubscribe?.();
    await Promise.all([...this.clusters.values()].map((cluster) => cluster.running));
  }

  private changed(clusterId: string, name: string): void {
    this.stateOf(clusterId).dirty.add(name);
    this.kick(clusterId);
  }

  private stateOf(clusterId: string): ClusterSync {
    let state = this.clusters.get(clusterId);
    if (!state) {
      // A cluster first heard of (registered just now): reconcile it in full first.
      state = { full: true, dirty: new Set(), running: null };
      this.clusters.set(clusterId, state);
    }
    return state;
  }

  private kick(clusterId: string): void {
    const state = this.stateOf(clusterId);
    if (state.running || this.stopped) {
      return;
    }
    state.running = this.drain(clusterId, state).finally(() => {
      state.running = null;
      // A change heard between the last pass and now; after a failure, the next change retries.
      if (state.dirty.size > 0) {
        this.kick(clusterId);
      }
    });
  }

  private async drain(clusterId: string, state: ClusterSync): Promise<void> {
    try {
      while (!this.stopped && (state.full || state.dirty.size > 0)) {
        if (state.full) {
          await Promise.race([this.watches.synced(clusterId), this.stopping]);
          if (this.stopped) {
            return;
          }
          state.full = false;
          state.dirty.clear();
          await this.reconcile(clusterId, null);
        } else {
          const names = [...state.dirty];
          state.dirty.clear();
          await this.reconcile(clusterId, names);
        }
      }
    } catch (error) {
      this.log.warn({ err: error, clusterId }, 'could not sync the inventory with the cluster; trying again with the next change');
      state.full = true;
    }
  }

  /** Reconciles the named Nodes (all of the cluster's when `names` is null) with their records. */
  private async reconcile(clusterId: string, names: readonly string[] | null): Promise<void> {
    const current = new Map((await this.watches.ensure(clusterId)).nodes().map((node) => [node.name, node]));
    const records = await this.store.activeOf(clusterId, names);
    const byName = new Map(records.map((record) => [record.hostname, record]));
    const all = names ?? [...new Set([...current.keys(), ...byName.keys()])];
    const found: NodeSummary[] = [];
    for (const name of all) {
      if (this.stopped) {
        return;
      }
      const node = current.get(name);
      const record = byName.get(name);
      if (node && !record) {
        found.push(node);
      } else {
        await this.apply(clusterId, node, record);
      }
    }
    await this.discoverAll(clusterId, found);
  }

  /**
   * Records the Nodes found without a record, many a statement (a new cluster of thousands is
   * discovered in seconds); one that could not be recorded with the rest (an added host claims its
   * address, another replica recorded it first) is taken alone.
   */
  private async discoverAll(clusterId: string, nodes: readonly NodeSummary[]): Promise<void> {
    if (nodes.length === 0 || this.stopped) {
      return;
    }
    const created = await this.store.createDiscovered(nodes.map((node) => discoveredRecord(clusterId, node, true)));
    for (const record of created) {
      this.log.info({ nodeId: record.id, node: record.hostname, role: record.role }, 'discovered a Node of the cluster');
    }
    const recorded = new Set(created.map((record) => record.hostname));
    for (const node of nodes.filter((candidate) => !recorded.has(candidate.name))) {
      await this.discover(clusterId, node);
    }
  }

  private async apply(clusterId: string, node: NodeSummary | undefined, record: NodeEntity | undefined): Promise<void> {
    if (node && record) {
      const fields: Partial<NodeEntity> = {};
      const role = node.roles.length > 0 || node.controlPlaneTaints.length > 0 ? inventoryRole(node) : record.role;
      if (role !== record.role) {
        fields.role = role;
      }
      if (node.ready !== record.ready) {
        fields.ready = node.ready;
      }
      if (node.readyStatus !== record.readyStatus) {
        fields.readyStatus = node.readyStatus;
      }
      const readySince = node.readySince ? new Date(node.readySince) : null;
      if (readySince?.getTime() !== record.readySince?.getTime()) {
        fields.readySince = readySince;
      }
      if (node.unschedulable !== record.unschedulable) {
        fields.unschedulable = node.unschedulable;
      }
      const ip = addressOf(node);
      if (record.origin === 'DISCOVERED' && ip && ip !== record.ip) {
        fields.ip = ip;
      }
      if (Object.keys(fields).length > 0) {
        await this.store.update(record.id, fields).catch((error: unknown) => {
          if (!uniqueViolationOf(error)) {
            throw error;
          }
          this.log.warn({ nodeId: record.id, fields }, 'not updated: another node of the cluster has that address');
        });
      }
      return;
    }
    if (node) {
      await this.discover(clusterId, node);
      return;
    }
    if (record && allowedFrom('NODE_VANISHED').includes(record.status)) {
      await this.store
        .transition(record.id, 'NODE_VANISHED', message('node.vanished', { hostname: record.hostname }), { ready: false })
        .then(() => this.log.info({ nodeId: record.id, node: record.hostname }, 'Node deleted outside the service: record marked REMOVED'))
        // A removal run or another replica changed the node meanwhile: theirs is the newer word.
        .catch((error: unknown) => this.log.debug({ err: error, nodeId: record.id }, 'node vanished, but its status changed meanwhile'));
    }
  }

  private async discover(clusterId: string, node: NodeSummary, withIp = true): Promise<void> {
    try {
      const created = await this.store.create(discoveredRecord(clusterId, node, withIp));
      this.log.info({ nodeId: created.id, node: node.name, role: created.role }, 'discovered a Node of the cluster');
    } catch (error) {
      const constraint = uniqueViolationOf(error);
      if (constraint === 'nodes_cluster_ip_active' && withIp) {
        // An added node (under another name) already claims that address: keep the record without it.
        await this.discover(clusterId, node, false);
      } else if (!constraint) {
        throw error;
      }
      // Otherwise another replica recorded it first.
    }
  }
}

/** The record of a Node found in the cluster (without its address when an added host claims it). */
function discoveredRecord(clusterId: string, node: NodeSummary, withIp: boolean) {
  return {
    clusterId,
    hostname: node.name,
    ip: withIp ? addressOf(node) : null,
    status: 'JOINED' as const,
    ...reasonFields(message('node.discovered')),
    origin: 'DISCOVERED' as const,
    role: inventoryRole(node),
    ready: node.ready,
    readyStatus: node.readyStatus,
    readySince: node.readySince ? new Date(node.readySince) : null,
    unschedulable: node.unschedulable,
    everJoined: true,
  };
}
