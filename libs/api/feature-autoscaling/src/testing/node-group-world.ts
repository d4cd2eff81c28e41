import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { AuditLog, ClusterEntity, type Database, type NodeEntity, type NodeGroupEntity, NodeGroupStore, type NodeGroupMemberState, NodeStore, ClusterStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import type { HardwareFacts, HostVerdict, NodeEvent } from '@ccos/shared/domain';
import type { AutoscalingPorts, RemovalStart, SpareHost } from '../lib/autoscaling-ports';
import type { NodeGroupDefinition } from '../lib/node-group-model';
import { type NodeGroups, type NodeGroupsOptions, createNodeGroups } from '../lib/node-groups';

/** A removal the test decides the end of. */
export interface HeldRemoval {
  readonly runId: string;
  readonly nodeId: string;
  readonly options: RemovalStart | undefined;
  end(status: 'SUCCEEDED' | 'FAILED', reason?: string): void;
}

/**
 * The other features as the node groups reach them, over the real node records: addNode stores
 * the host as its checks would leave it, the checks of a host back in the pool pass, and each
 * removal waits for the test to end it.
 */
export class FakeAutoscalingPorts implements AutoscalingPorts {
  readonly added: SpareHost[] = [];
  readonly checked: string[] = [];
  readonly cleaned: string[] = [];
  readonly batches: Array<{ readonly clusterId: string; readonly nodeIds: readonly string[]; readonly actor: string }> = [];
  readonly removals: HeldRemoval[] = [];
  /** What addNode's checks decide for the next host added: its status, arch and verdict. */
  nextAdd: { status: NodeEntity['status']; arch: string; verdict: HostVerdict | null; hardware?: HardwareFacts } = { status: 'READY_TO_INSTALL', arch: 'x86_64', verdict: null };
  private readonly outcomes = new Map<string, Promise<{ status: string; reason: string | null }>>();

  constructor(private readonly nodes: NodeStore) {}

  async addNode(host: SpareHost): Promise<string> {
    this.added.push(host);
    const { status, arch, verdict, hardware } = this.nextAdd;
    const node = await this.nodes.create({ clusterId: host.clusterId, hostname: host.hostname, ip: host.ip, sshPort: host.sshPort, sshUser: host.sshUser, status, labels: [...host.labels], taints: [...host.taints], facts: { arch, hardware }, hostVerdict: verdict });
    return node.id;
  }

  async checkHost(nodeId: string): Promise<void> {
    this.checked.push(nodeId);
    await this.nodes.update(nodeId, { facts: { arch: 'x86_64' } });
    await this.nodes.transition(nodeId, 'AGENT_COPIED', null);
  }

  async cleanLeftovers(nodeId: string): Promise<void> {
    this.cleaned.push(nodeId);
  }

  async installAsBatch(clusterId: string, nodeIds: readonly string[], actor: string): Promise<string> {
    this.batches.push({ clusterId, nodeIds: [...nodeIds], actor });
    return `batch-${this.batches.length}`;
  }

  async startRemoval(nodeId: string, _actor: string, options?: RemovalStart): Promise<string> {
    const runId = randomUUID();
    let end!: (outcome: { status: string; reason: string | null }) => void;
    this.outcomes.set(runId, new Promise((resolve) => (end = resolve)));
    this.removals.push({ runId, nodeId, options, end: (status, reason) => end({ status, reason: reason ?? null }) });
    return runId;
  }

  removalOutcome(runId: string): Promise<{ status: string; reason: string | null }> {
    return this.outcomes.get(runId) ?? Promise.reject(new Error(`no removal ${runId}`));
  }
}

/** A database of its own with one cluster, the stores, the fake ports and the node groups over them. */
export class NodeGroupWorld {
  readonly clusterId = randomUUID();
  readonly clusterName = `c-${this.clusterId.slice(0, 8)}`;

  readonly groups: NodeGroups;

  private constructor(
    private readonly database: TestDatabase,
    readonly dataSource: Database,
    readonly nodes: NodeStore,
    readonly store: NodeGroupStore,
    readonly ports: FakeAutoscalingPorts,
    private readonly options: NodeGroupsOptions,
  ) {
    this.groups = createNodeGroups(options);
  }

  static async create(): Promise<NodeGroupWorld> {
    const database = await createTestDatabase();
    const dataSource = await openDatabase({ url: database.url });
    const events = createInProcessEventBus();
    const nodes = new NodeStore(dataSource, nodeChangePublisher(events));
    const store = new NodeGroupStore(dataSource);
    const ports = new FakeAutoscalingPorts(nodes);
    const logger = pino({ level: 'silent' });
    const options = { nodeGroups: store, clusters: new ClusterStore(dataSource), nodes, ports, audit: new AuditLog(dataSource, logger), events, logger };
    const world = new NodeGroupWorld(database, dataSource, nodes, store, ports, options);
    await dataSource.getRepository(ClusterEntity).insert({ id: world.clusterId, name: world.clusterName, apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    await world.groups.start();
    return world;
  }

  /** Other node groups over the same database and ports, started (a service's restart, or a replica). */
  async startAnother(): Promise<NodeGroups> {
    const groups = createNodeGroups(this.options);
    await groups.start();
    return groups;
  }

  async close(): Promise<void> {
    await this.groups.stop();
    await this.dataSource.destroy();
    await this.database.drop();
  }

  /** A group of this cluster (min 0, max 3, amd64, one label) with `overrides`. */
  createGroup(name: string, overrides: Partial<NodeGroupDefinition> = {}): Promise<NodeGroupEntity> {
    return this.groups.registry.createGroup(
      {
        clusterId: this.clusterId,
        name,
        minSize: 0,
        maxSize: 3,
        labels: [{ key: 'pool', value: name }],
        taints: [],
        profile: { cpuCores: 2, memoryBytes: 4 * 2 ** 30, ephemeralStorageBytes: 20 * 2 ** 30, maxPods: 110, arch: 'amd64' },
        ...overrides,
      },
      'admin',
      { role: 'ADMIN' },
    );
  }

  /** Adds `hostname` as a spare of the group (addNode's checks as `nextAdd` says); the node's id. */
  async addSpare(group: NodeGroupEntity, hostname: string): Promise<string> {
    const member = await this.groups.registry.addSpare(group.id, { hostname, ip: `198.18.0.${10 + this.ports.added.length}`, sshPort: 22, sshUser: 'root', password: 'not-used' }, 'operator');
    return member.nodeId;
  }

  /** Moves the node record through `events`, as the install, the cluster or a removal would. */
  async drive(nodeId: string, ...events: NodeEvent[]): Promise<void> {
    for (const event of events) {
      await this.nodes.transition(nodeId, event, null);
    }
  }

  async memberState(nodeId: string): Promise<NodeGroupMemberState | undefined> {
    return (await this.store.member(nodeId))?.state;
  }

  async group(group: NodeGroupEntity): Promise<NodeGroupEntity> {
    return this.groups.registry.group(group.id);
  }

  /** The group's decisions, oldest first, as kind or `kind hostname`. */
  async activity(group: NodeGroupEntity): Promise<string[]> {
    return (await this.store.activitiesOf(group.id, 100)).reverse().map((entry) => (entry.hostname ? `${entry.kind} ${entry.hostname}` : entry.kind));
  }
}

/** A world for the file's tests: made before the first, closed after the last; call it in the file's `describe`. */
export function useNodeGroupWorld(): () => NodeGroupWorld {
  let world: NodeGroupWorld | undefined;
  beforeAll(async () => {
    world = await NodeGroupWorld.create();
  });
  afterAll(async () => {
    await world?.close();
  });
  return () => world ?? notMadeYet();
}

function notMadeYet(): never {
  throw new Error('the node group world is made in beforeAll');
}
