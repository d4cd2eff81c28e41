import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Database, ClusterEntity, NodeEntity, NodeStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import type { NodeEvent, NodeSummary } from '@ccos/api/data-access-kube';
import { createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { nodeHealth } from '@ccos/shared/domain';
import { type ClusterNodeWatches, NodeInventorySync } from './node-inventory-sync';

const summary = (name: string, extra: Partial<NodeSummary> = {}): NodeSummary => ({
  name,
  uid: `uid-${name}`,
  roles: ['worker'],
  ready: true,
  readyStatus: 'True',
  readySince: '2026-12-05T03:00:00.000Z',
  unschedulable: false,
  addresses: [
    { type: 'Hostname', address: name },
    { type: 'InternalIP', address: `10.0.${name.charCodeAt(0)}.${name.charCodeAt(1)}` },
  ],
  controlPlaneTaints: [],
  schedulingTaints: [],
  kubeletVersion: 'v1.32.0',
  bootId: null,
  allocatable: { cpuMillicores: 4000, memoryBytes: 8 * 2 ** 30, pods: 110 },
  createdAt: null,
  ...extra,
});

/** A cluster's Node watch, driven by the test. */
class FakeWatches implements ClusterNodeWatches {
  readonly nodes = new Map<string, NodeSummary>();
  private listener: ((clusterId: string, event: NodeEvent) => void) | null = null;
  constructor(private readonly clusterId: string) {}
  onNodeEvent(listener: (clusterId: string, event: NodeEvent) => void): () => void {
    this.listener = listener;
    return () => (this.listener = null);
  }
  async synced(): Promise<void> {
    return undefined;
  }
  async ensure(): Promise<{ nodes(): NodeSummary[] }> {
    return { nodes: () => [...this.nodes.values()] };
  }
  put(node: NodeSummary): void {
    const type = this.nodes.has(node.name) ? 'MODIFIED' : 'ADDED';
    this.nodes.set(node.name, node);
    this.listener?.(this.clusterId, { type, node });
  }
  remove(name: string): void {
    const node = this.nodes.get(name);
    this.nodes.delete(name);
    if (node) {
      this.listener?.(this.clusterId, { type: 'DELETED', node });
    }
  }
}

describe('node inventory sync', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let store: NodeStore;
  let clusterId: string;
  let watches: FakeWatches;
  let sync: NodeInventorySync;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    store = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(async () => {
    clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: `c-${clusterId.slice(0, 8)}`, apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    watches = new FakeWatches(clusterId);
  });
  afterEach(async () => {
    await sync?.stop();
  });

  const records = async () =>
    (await store.listOf(clusterId)).map((node) => ({
      hostname: node.hostname,
      origin: node.origin,
      status: node.status,
      role: node.role,
      ready: node.ready,
      unschedulable: node.unschedulable,
      everJoined: node.everJoined,
    }));

  const startSync = async () => {
    sync = new NodeInventorySync(store, watches, { list: async () => [{ id: clusterId }] }, pino({ level: 'silent' }));
    await sync.start();
    await sync.idle();
  };

  it('records the Nodes it finds at start as DISCOVERED, with their roles, and leaves added nodes ADDED', async () => {
    await store.create({ clusterId, hostname: 'w2', ip: '198.18.0.12', status: 'INSTALLING', origin: 'ADDED' });
    watches.nodes.set('m1', summary('m1', { roles: ['control-plane', 'master'], controlPlaneTaints: [{ key: 'node-role.kubernetes.io/master', value: null, effect: 'NoSchedule' }] }));
    watches.nodes.set('w1', summary('w1', { unschedulable: true }));
    watches.nodes.set('w2', summary('w2', { ready: false, readyStatus: 'False' }));
    await startSync();
    expect(await records()).toEqual([
      { hostname: 'm1', origin: 'DISCOVERED', status: 'JOINED', role: 'control-plane', ready: true, unschedulable: false, everJoined: true },
      { hostname: 'w1', origin: 'DISCOVERED', status: 'JOINED', role: 'worker', ready: true, unschedulable: true, everJoined: true },
      { hostname: 'w2', origin: 'ADDED', status: 'INSTALLING', role: 'worker', ready: false, unschedulable: false, everJoined: false },
    ]);
    expect((await dataSource.getRepository(NodeEntity).findOneByOrFail({ clusterId, hostname: 'w1' })).ip).toBe(summary('w1').addresses[1].address);
  });

  it('keeps a discovered Node without an address an added node already uses', async () => {
    await store.create({ clusterId, hostname: 'h1', ip: '198.18.0.11', status: 'READY_TO_INSTALL', origin: 'ADDED' });
    watches.nodes.set('other', summary('other', { addresses: [{ type: 'InternalIP', address: '198.18.0.11' }] }));
    await startSync();
    expect(await dataSource.getRepository(NodeEntity).findOneByOrFail({ clusterId, hostname: 'other' })).toMatchObject({ origin: 'DISCOVERED', ip: null });
  });

  it('records a cluster of 1,200 Nodes at start, one of them at an address an added node uses, and tells subscribers of each', async () => {
    const told: string[] = [];
    const telling = new NodeStore(dataSource, (node) => told.push(node.id));
    await telling.create({ clusterId, hostname: 'h1', ip: '198.18.0.11', status: 'READY_TO_INSTALL', origin: 'ADDED' });
    const names = Array.from({ length: 1200 }, (_, index) => `n${String(index).padStart(4, '0')}`);
    for (const [index, name] of names.entries()) {
      const address = index === 700 ? '198.18.0.11' : `10.9.${Math.floor(index / 250)}.${index % 250}`;
      watches.nodes.set(name, summary(name, { addresses: [{ type: 'InternalIP', address }] }));
    }
    sync = new NodeInventorySync(telling, watches, { list: async () => [{ id: clusterId }] }, pino({ level: 'silent' }));
    await sync.start();
    await sync.idle();
    const discovered = (await telling.listOf(clusterId)).filter((node) => node.origin === 'DISCOVERED');
    expect(discovered.map((node) => node.hostname).sort()).toEqual(names);
    expect(discovered.find((node) => node.hostname === 'n0700')?.ip).toBeNull();
    expect(discovered.find((node) => node.hostname === 'n0701')?.ip).toBe('10.9.2.201');
    expect(new Set(told).size).toBe(1201);
    expect(told).toHaveLength(1201);
  });

  it('follows Ready and cordon changes, discovers new Nodes and marks Nodes deleted outside the service REMOVED', async () => {
    await startSync();
    watches.put(summary('w1'));
    watches.put(summary('w2'));
    await sync.idle();
    watches.put(summary('w1', { unschedulable: true, ready: false, readyStatus: 'Unknown' }));
    watches.remove('w2');
    await sync.idle();
    expect(await records()).toEqual([
      { hostname: 'w1', origin: 'DISCOVERED', status: 'JOINED', role: 'worker', ready: false, unschedulable: true, everJoined: true },
      { hostname: 'w2', origin: 'DISCOVERED', status: 'REMOVED', role: 'worker', ready: false, unschedulable: false, everJoined: true },
    ]);
    const gone = await dataSource.getRepository(NodeEntity).findOneByOrFail({ clusterId, hostname: 'w2' });
    expect(gone.statusReason).toBe('the Node object w2 was deleted from the cluster outside this service');

    // The same name registering again is a new node; the removed record keeps its history.
    watches.put(summary('w2'));
    await sync.idle();
    expect((await records()).filter((node) => node.hostname === 'w2').map((node) => node.status)).toEqual(['REMOVED', 'JOINED']);
  });

  it('keeps the Ready condition\'s status and when it last changed, which the node\'s health is judged from', async () => {
    await startSync();
    watches.put(summary('w1'));
    await sync.idle();
    const health = async () => {
      const node = await dataSource.getRepository(NodeEntity).findOneByOrFail({ clusterId, hostname: 'w1' });
      return { readyStatus: node.readyStatus, readySince: node.readySince?.toISOString() ?? null, health: nodeHealth(node)?.state };
    };
    expect(await health()).toEqual({ readyStatus: 'True', readySince: '2026-12-05T03:00:00.000Z', health: 'HEALTHY' });
    watches.put(summary('w1', { ready: false, readyStatus: 'Unknown', readySince: '2026-12-05T03:07:00.000Z' }));
    await sync.idle();
    expect(await health()).toEqual({ readyStatus: 'Unknown', readySince: '2026-12-05T03:07:00.000Z', health: 'UNHEALTHY' });
  });

  it('finds at start what vanished while the service was down, and leaves nodes being removed to their run', async () => {
    const vanished = await store.create({ clusterId, hostname: 'w1', status: 'JOINED', origin: 'ADDED', everJoined: true });
    const removing = await store.create({ clusterId, hostname: 'w2', status: 'REMOVING', origin: 'ADDED', everJoined: true });
    const installing = await store.create({ clusterId, hostname: 'w3', status: 'INSTALLING', origin: 'ADDED' });
    await startSync();
    expect((await store.get(vanished.id)).status).toBe('REMOVED');
    expect((await store.get(removing.id)).status).toBe('REMOVING');
    expect((await store.get(installing.id)).status).toBe('INSTALLING');
  });

  it('does not bring back a Node whose late event arrives after it is gone', async () => {
    await startSync();
    watches.nodes.set('w9', summary('w9'));
    watches.remove('w9');
    // An ADDED heard after the Node was deleted: the pass reads the watch's current state.
    watches.nodes.delete('w9');
    (watches as unknown as { listener: (c: string, e: NodeEvent) => void }).listener(clusterId, { type: 'ADDED', node: summary('w9') });
    await sync.idle();
    expect(await records()).toEqual([]);
  });

  // A stop that waited for the cluster would never resolve: the test's own timeout is the bound.
  it('stops without waiting for a cluster whose API server never answers', { timeout: 2000 }, async () => {
    watches.synced = () => new Promise(() => undefined);
    sync = new NodeInventorySync(store, watches, { list: async () => [{ id: clusterId }] }, pino({ level: 'silent' }));
    await sync.start();
    await expect(sync.stop()).resolves.toBeUndefined();
  });
});
