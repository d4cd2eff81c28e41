import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { watchPods, type PodEvent, type PodWatch } from './pod-watch';

const pod = (name: string, nodeName?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'shop',
    labels: { app: 'web' },
    annotations: { 'kubernetes.io/config.mirror': 'x' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: '0a1b2c3d-0000-4000-8000-000000000001', controller: true, blockOwnerDeletion: true }],
    managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': {} } }],
  },
  spec: {
    ...(nodeName ? { nodeName } : {}),
    volumes: [{ name: 'scratch', emptyDir: {} }, { name: 'config', configMap: { name: 'web' } }],
    containers: [{ name: 'c', image: 'web', env: [{ name: 'A', value: 'b' }], resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

/** The shop namespace and these objects, as a kube-sim seed (JSON is YAML). */
const seedOf = (...objects: object[]): string => [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }, ...objects].map((obj) => JSON.stringify(obj)).join('\n---\n');

describe('watchPods', () => {
  let world: SimWithClient | undefined;
  let pods: PodWatch | undefined;

  afterEach(async () => {
    await pods?.stop();
    await world?.stop();
    pods = undefined;
    world = undefined;
  });

  /** A pod watch whose events can be awaited: `next(match)` resolves with the first later event that matches. */
  const watching = (sim: SimWithClient) => {
    const waiting: Array<{ match: (event: PodEvent) => boolean; resolve: (event: PodEvent) => void }> = [];
    const watch = watchPods(sim.client, (event) => {
      for (const waiter of waiting.filter((entry) => entry.match(event))) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    });
    const next = (match: (event: PodEvent) => boolean): Promise<PodEvent> => new Promise((resolve) => waiting.push({ match, resolve }));
    return { watch, next };
  };
  const names = (list: V1Pod[]): string[] => list.map((entry) => entry.metadata?.name ?? '').sort();

  it('caches the scheduled pods by node from one list, then follows creations and deletions by watch alone', async () => {
    const requests: string[] = [];
    world = await startSimWithClient({
      seed: seedOf(pod('a1', 'w1'), pod('a2', 'w1'), pod('b1', 'w2'), pod('pending')),
      log: (line) => requests.push(line),
    });
    const { watch, next } = watching(world);
    pods = watch;
    expect(pods.isSynced()).toBe(false);
    await pods.synced;
    expect(pods.isSynced()).toBe(true);
    expect([names(pods.podsOnNode('w1')), names(pods.podsOnNode('w2')), names(pods.podsOnNode('w3'))]).toEqual([['a1', 'a2'], ['b1'], []]);

    const { client } = world;
    const added = next((event) => event.type === 'ADDED' && event.object.metadata?.name === 'a3');
    await client.call('create', (options) => client.core.createNamespacedPod({ namespace: 'shop', body: pod('a3', 'w1') as V1Pod }, options));
    await added;
    expect(names(pods.podsOnNode('w1'))).toEqual(['a1', 'a2', 'a3']);

    const deleted = next((event) => event.type === 'DELETED' && event.object.metadata?.name === 'a1');
    await client.call('delete', (options) => client.core.deleteNamespacedPod({ namespace: 'shop', name: 'a1', gracePeriodSeconds: 0 }, options));
    await deleted;
    expect(names(pods.podsOnNode('w1'))).toEqual(['a2', 'a3']);

    const lists = requests.filter((line) => line.startsWith('GET /api/v1/pods?') && !line.includes('watch=true'));
    expect(lists).toHaveLength(1);
    // The server logs a request once it has finished: the watch still open is not among them.
    expect(new URL(lists[0].split(' ')[1], 'https://sim').searchParams.get('fieldSelector')).toBe('spec.nodeName!=');
  });

  it('keeps what a drain plan and a capacity check read, nothing else', async () => {
    world = await startSimWithClient({ seed: seedOf(pod('a1', 'w1')) });
    const { watch, next } = watching(world);
    pods = watch;
    await pods.synced;
    const listed = pods.podsOnNode('w1')[0];
    const { client } = world;
    const added = next((event) => event.type === 'ADDED' && event.object.metadata?.name === 'a2');
    await client.call('create', (options) => client.core.createNamespacedPod({ namespace: 'shop', body: pod('a2', 'w1') as V1Pod }, options));
    const watched = (await added).object;
    for (const kept of [listed, watched]) {
      expect(kept.metadata).toMatchObject({ namespace: 'shop', labels: { app: 'web' }, annotations: { 'kubernetes.io/config.mirror': 'x' } });
      expect(kept.metadata?.managedFields).toBeUndefined();
      // What a drain needs to name and evict the pod and to find its controller and its PodDisruptionBudgets.
      expect(kept.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(kept.metadata?.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: '0a1b2c3d-0000-4000-8000-000000000001', controller: true }]);
      expect(kept.spec).toEqual({
        nodeName: 'w1',
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [{ name: 'c', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
      });
      expect(Object.keys(kept.status ?? {})).toEqual(['phase']);
    }
  });
});
