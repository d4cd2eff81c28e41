import type { ConfigurationOptions, V1Node } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, FakeClock } from '@ccos/shared/util-timing/testing';
import { clientVia, CuttableProxy, startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { InformerCache, Reflector, startInformer, type Informer, type InformerEvent } from './informer';
import type { KubeClient } from './kube-client';

const node = (name: string, labels: Record<string, string> = {}): V1Node => ({ metadata: { name, labels } });

describe('startInformer', () => {
  let world: SimWithClient | undefined;
  let proxy: CuttableProxy | undefined;
  let informer: Informer<V1Node> | undefined;
  let witness: Informer<V1Node> | undefined;
  let viaProxy: KubeClient | undefined;
  // Backoffs and watch guards run on this clock: a test moves time only when it has seen the failure.
  let clock = new FakeClock(undefined, false);

  afterEach(async () => {
    await informer?.stop();
    await witness?.stop();
    witness = undefined;
    clock = new FakeClock(undefined, false);
    viaProxy?.close();
    await proxy?.stop();
    await world?.stop();
    informer = undefined;
    viaProxy = undefined;
    proxy = undefined;
    world = undefined;
  });

  const nodesSource = (client: KubeClient) => ({
    path: '/api/v1/nodes',
    description: 'list nodes',
    list: (page: { limit: number; _continue?: string }, options: ConfigurationOptions) => client.core.listNode(page, options),
  });

  const summary = (events: InformerEvent<V1Node>[]): string[] => events.map((e) => `${e.type} ${e.object.metadata?.name}`);

  it('lists in pages, then watches from the list: every change once, in order', async () => {
    const requests: string[] = [];
    world = await startSimWithClient({ seed: [1, 2, 3].map((i) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: `n${i}` } })), log: (line) => requests.push(line) });
    const events: InformerEvent<V1Node>[] = [];
    informer = startInformer(world.client, nodesSource(world.client), (event) => events.push(event), { pageSize: 2 });
    await informer.synced;
    expect(summary(events)).toEqual(['ADDED n1', 'ADDED n2', 'ADDED n3']);
    expect(requests.filter((line) => line.startsWith('GET /api/v1/nodes?') && !line.includes('watch=true'))).toHaveLength(2);

    const { client } = world;
    await client.call('create', (o) => client.core.createNode({ body: node('n4') }, o));
    await client.call('label', (o) => client.core.replaceNode({ name: 'n1', body: { ...node('n1', { a: 'b' }), metadata: { name: 'n1', labels: { a: 'b' } } } }, o));
    await client.call('delete', (o) => client.core.deleteNode({ name: 'n2' }, o));
    await eventually(() => (events.length >= 6 ? true : undefined));
    expect(summary(events.slice(3))).toEqual(['ADDED n4', 'MODIFIED n1', 'DELETED n2']);
    expect(informer.list().map((n) => n.metadata?.name).sort()).toEqual(['n1', 'n3', 'n4']);
  });

  it('trims each page of the list as it arrives, so a long list never holds every object whole', async () => {
    world = await startSimWithClient({ seed: [1, 2, 3, 4, 5].map((i) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: `n${i}`, labels: { big: 'x'.repeat(60) } } })) });
    const steps: string[] = [];
    const source = nodesSource(world.client);
    const listed = {
      ...source,
      list: (page: { limit: number; _continue?: string }, options: ConfigurationOptions) => source.list(page, options).then((answer) => (steps.push(`page of ${answer.items.length}`), answer)),
      transform: (whole: V1Node): V1Node => (steps.push(`trim ${whole.metadata?.name}`), { metadata: { name: whole.metadata?.name, resourceVersion: whole.metadata?.resourceVersion } }),
    };
    informer = startInformer(world.client, listed, () => undefined, { pageSize: 2 });
    await informer.synced;
    expect(steps).toEqual(['page of 2', 'trim n1', 'trim n2', 'page of 2', 'trim n3', 'trim n4', 'page of 1', 'trim n5']);
    expect(informer.list().map((cached) => cached.metadata?.labels)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('after a network outage longer than the watch history, lists again (410 Gone) and reports the difference', async () => {
    const requests: string[] = [];
    world = await startSimWithClient({ seed: ['a', 'b', 'c'].map((n) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: n } })), watchCacheSize: 2, log: (line) => requests.push(line) });
    proxy = await CuttableProxy.start(world.sim);
    viaProxy = clientVia(world.sim, proxy.url);
    const events: InformerEvent<V1Node>[] = [];
    const errors: Array<{ message: string; retryInMs: number }> = [];
    informer = startInformer(viaProxy, nodesSource(viaProxy), (event) => events.push(event), {
      initialBackoffMs: 50,
      maxBackoffMs: 200,
      onError: (error, retryInMs) => errors.push({ message: error.message, retryInMs }),
      clock,
    });
    await informer.synced;
    const uidOfC = informer.list().find((n) => n.metadata?.name === 'c')?.metadata?.uid;
    events.length = 0;

    proxy.cutLink();
    const { client } = world;
    await client.call('delete a', (o) => client.core.deleteNode({ name: 'a' }, o));
    await client.call('create d', (o) => client.core.createNode({ body: node('d') }, o));
    await client.call('label b', (o) => client.core.patchNode({ name: 'b', body: [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }] }, o));
    // c deleted and created again: same name, new UID.
    await client.call('delete c', (o) => client.core.deleteNode({ name: 'c' }, o));
    await client.call('create c', (o) => client.core.createNode({ body: node('c') }, o));
    await eventually(() => (errors.length >= 1 ? true : undefined), 5000, 'the first failure');
    await clock.advance(errors[0].retryInMs);
    await eventually(() => (errors.length >= 2 ? true : undefined), 5000, 'the reconnect attempt failing');
    proxy.restore();
    await clock.advance(errors[1].retryInMs);

    await eventually(() => (events.length >= 5 ? true : undefined), 10_000, 'events after the re-list');
    expect(summary(events).sort()).toEqual(['ADDED c', 'ADDED d', 'DELETED a', 'DELETED c', 'MODIFIED b']);
    expect(events.find((e) => e.type === 'DELETED' && e.object.metadata?.name === 'c')?.object.metadata?.uid).toBe(uidOfC);
    expect(informer.list().map((n) => n.metadata?.name).sort()).toEqual(['b', 'c', 'd']);
    expect(errors[0].message).toMatch(/watch \/api\/v1\/nodes|cannot reach/);
    expect(errors.every((e) => e.retryInMs <= 240)).toBe(true);
    // Initial list, and the one after the 410.
    expect(requests.filter((line) => line.startsWith('GET /api/v1/nodes?') && !line.includes('watch=true'))).toHaveLength(2);
  });

  it('resumes the watch without listing again when the outage is short', async () => {
    const requests: string[] = [];
    world = await startSimWithClient({ seed: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'a' } }], log: (line) => requests.push(line) });
    proxy = await CuttableProxy.start(world.sim);
    viaProxy = clientVia(world.sim, proxy.url);
    const events: InformerEvent<V1Node>[] = [];
    const retries: number[] = [];
    informer = startInformer(viaProxy, nodesSource(viaProxy), (event) => events.push(event), { initialBackoffMs: 50, maxBackoffMs: 100, onError: (_error, retryInMs) => retries.push(retryInMs), clock });
    await informer.synced;
    proxy.cutLink();
    const { client } = world;
    await client.call('create b', (o) => client.core.createNode({ body: node('b') }, o));
    await eventually(() => retries[0], 5000, 'the watch failing');
    proxy.restore();
    await clock.advance(retries[0] ?? 0);
    await eventually(() => (events.length >= 2 ? true : undefined), 5000);
    expect(summary(events)).toEqual(['ADDED a', 'ADDED b']);
    expect(requests.filter((line) => line.startsWith('GET /api/v1/nodes?') && !line.includes('watch=true'))).toHaveLength(1);
  });

  it('stops cleanly: no events after stop, and stop resolves while the API is unreachable', async () => {
    world = await startSimWithClient();
    proxy = await CuttableProxy.start(world.sim);
    viaProxy = clientVia(world.sim, proxy.url);
    const events: InformerEvent<V1Node>[] = [];
    let failures = 0;
    informer = startInformer(viaProxy, nodesSource(viaProxy), (event) => events.push(event), { initialBackoffMs: 5000, onError: () => failures++, clock });
    await informer.synced;
    proxy.cutLink();
    await eventually(() => (failures > 0 ? true : undefined), 5000, 'the watch failing');
    // The clock never moves: stop can only resolve by cutting the 5 s backoff short.
    await informer.stop();
    expect(clock.monotonic()).toBe(0);
    proxy.restore();
    const seen: string[] = [];
    witness = startInformer(viaProxy, nodesSource(viaProxy), (event) => seen.push(event.object.metadata?.name ?? ''), { clock });
    await witness.synced;
    const { client } = world;
    await client.call('create', (o) => client.core.createNode({ body: node('late') }, o));
    // A running informer on the same link hears of the new node; the stopped one still says nothing.
    await eventually(() => (seen.includes('late') ? true : undefined), 5000, 'the witness seeing the late node');
    expect(events).toEqual([]);
  });

  it('says when the API answers again, and retryNow cuts a long backoff short', async () => {
    world = await startSimWithClient({ seed: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'a' } }] });
    proxy = await CuttableProxy.start(world.sim);
    viaProxy = clientVia(world.sim, proxy.url);
    const healthy: number[] = [];
    const errors: number[] = [];
    informer = startInformer(viaProxy, nodesSource(viaProxy), () => undefined, {
      // Long waits after a failure: only retryNow can make the next attempt come soon.
      initialBackoffMs: 60_000,
      maxBackoffMs: 60_000,
      onError: () => errors.push(clock.monotonic()),
      onHealthy: () => healthy.push(clock.monotonic()),
      clock,
    });
    await informer.synced;
    // The list, then the watch stream opening.
    await eventually(() => (healthy.length >= 2 ? true : undefined));
    proxy.cutLink();
    await eventually(() => (errors.length >= 1 ? true : undefined));
    const before = healthy.length;
    proxy.restore();
    informer.retryNow();
    await eventually(() => (healthy.length > before ? true : undefined), 5_000);
    // The clock stood still, so the 60 s backoff never ran out: retryNow made the attempt.
    expect(healthy.at(-1)).toBe(0);
  });

  it('goes through its phases: listing, watching, backing off after a failure, watching again, stopped', async () => {
    world = await startSimWithClient({ seed: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'a' } }] });
    proxy = await CuttableProxy.start(world.sim);
    viaProxy = clientVia(world.sim, proxy.url);
    const retries: number[] = [];
    let healthy = 0;
    const reflector = new Reflector(viaProxy, nodesSource(viaProxy), () => undefined, { initialBackoffMs: 100, onError: (_e, retryInMs) => retries.push(retryInMs), onHealthy: () => healthy++, clock });
    informer = reflector;
    expect(reflector.phase).toBe('listing');
    reflector.start();
    await reflector.synced;
    await eventually(() => (healthy >= 2 ? true : undefined), 5000, 'the watch opening');
    expect(reflector.phase).toBe('watching');
    proxy.cutLink();
    await eventually(() => retries[0], 5000, 'the watch failing');
    expect(reflector.phase).toBe('backing-off');
    proxy.restore();
    await clock.advance(retries[0] ?? 0);
    await eventually(() => (healthy >= 3 ? true : undefined), 5000, 'the watch opening again');
    expect(reflector.phase).toBe('watching');
    await reflector.stop();
    expect(reflector.phase).toBe('stopped');
  });
});

describe('InformerCache', () => {
  const at = (name: string, resourceVersion: string, uid = `uid-${name}`): V1Node => ({ metadata: { name, resourceVersion, uid } });

  it.each([
    ['a new object is ADDED', [['ADDED', at('a', '1')]], ['ADDED a@1']],
    ['a known object with a new resourceVersion is MODIFIED', [['ADDED', at('a', '1')], ['MODIFIED', at('a', '2')]], ['ADDED a@1', 'MODIFIED a@2']],
    ['the same resourceVersion again is no change', [['ADDED', at('a', '1')], ['MODIFIED', at('a', '1')]], ['ADDED a@1']],
    ['a new UID under a known name is a delete of the old and an add', [['ADDED', at('a', '1')], ['MODIFIED', at('a', '5', 'other')]], ['ADDED a@1', 'DELETED a@1', 'ADDED a@5']],
    ['deleting an unknown object says nothing', [['DELETED', at('x', '1')]], []],
    ['a deletion reports the last state it was told', [['ADDED', at('a', '1')], ['DELETED', at('a', '3')]], ['ADDED a@1', 'DELETED a@3']],
  ] as const)('%s', (_case, changes, expected) => {
    const events: string[] = [];
    const cache = new InformerCache<V1Node>((e) => events.push(`${e.type} ${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}`));
    for (const [type, obj] of changes) {
      cache.apply(type, obj);
    }
    expect(events).toEqual(expected);
  });

  it('on a re-list reports what went away, what changed and what is new', () => {
    const events: string[] = [];
    const cache = new InformerCache<V1Node>((e) => events.push(`${e.type} ${e.object.metadata?.name}`));
    cache.replace([at('kept', '1'), at('changed', '1'), at('gone', '1')]);
    events.length = 0;
    cache.replace([at('kept', '1'), at('changed', '2'), at('new', '1')]);
    expect(events).toEqual(['DELETED gone', 'MODIFIED changed', 'ADDED new']);
    expect(cache.list().map((n) => n.metadata?.name)).toEqual(['kept', 'changed', 'new']);
  });

  it('keeps its indexes in step with changes, replacements under the same name and re-lists', () => {
    const zoned = (name: string, resourceVersion: string, zone: string, uid = `uid-${name}`): V1Node => ({ metadata: { name, resourceVersion, uid, labels: { zone } } });
    const cache = new InformerCache<V1Node>(() => undefined, { zone: (n) => (n.metadata?.labels?.['zone'] ? [n.metadata.labels['zone']] : []) });
    const inZone = (zone: string): string[] => cache.byIndex('zone', zone).map((n) => n.metadata?.name ?? '').sort();
    cache.replace([zoned('a', '1', 'east'), zoned('b', '1', 'east'), zoned('c', '1', 'west')]);
    expect([inZone('east'), inZone('west')]).toEqual([['a', 'b'], ['c']]);
    cache.apply('MODIFIED', zoned('b', '2', 'west'));
    cache.apply('MODIFIED', zoned('a', '3', 'north', 'other'));
    cache.apply('DELETED', zoned('c', '4', 'west'));
    expect([inZone('east'), inZone('west'), inZone('north')]).toEqual([[], ['b'], ['a']]);
    cache.replace([zoned('d', '5', 'east')]);
    expect([inZone('east'), inZone('west'), inZone('north')]).toEqual([['d'], [], []]);
    expect(() => cache.byIndex('rack', 'r1')).toThrow('no indexer named rack');
  });
});

