import { CoreV1Api, makeInformer, Watch, type V1Node } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { eventually, kubeConfigFor, rawRequest } from './testing/kube-clients';

interface Event {
  type: string;
  object: { kind?: string; code?: number; reason?: string; metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> } };
}

describe('watch', () => {
  let sim: KubeSim;
  let core: CoreV1Api;

  beforeAll(async () => {
    sim = await startKubeSim({ watchCacheSize: 5, bookmarkIntervalMs: 200 });
    core = kubeConfigFor(sim).makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('streams newline-delimited events from a resourceVersion, chunked, as application/json', async () => {
    const list = await core.listNode();
    const rv = list.metadata?.resourceVersion ?? '';
    const pending = rawRequest(sim, { path: `/api/v1/nodes?watch=1&resourceVersion=${rv}&timeoutSeconds=1` });
    await new Promise((r) => setTimeout(r, 100));
    await core.createNode({ body: { metadata: { name: 'w1' } } });
    await core.patchNode({ name: 'w1', body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] });
    await core.deleteNode({ name: 'w1' });
    const res = await pending;
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const events = res.body.trim().split('\n').map((l) => JSON.parse(l) as Event);
    expect(events.map((e) => `${e.type} ${e.object.kind} ${e.object.metadata?.name}`)).toEqual(['ADDED Node w1', 'MODIFIED Node w1', 'DELETED Node w1']);
    const rvs = events.map((e) => Number(e.object.metadata?.resourceVersion));
    expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
  });

  it('turns objects entering and leaving a label selector into ADDED and DELETED', async () => {
    await core.createNode({ body: { metadata: { name: 'sel' } } });
    const rv = (await core.listNode()).metadata?.resourceVersion ?? '';
    const pending = rawRequest(sim, { path: `/api/v1/nodes?watch=true&labelSelector=pool%3Dgpu&resourceVersion=${rv}&timeoutSeconds=1` });
    await new Promise((r) => setTimeout(r, 100));
    await core.patchNode({ name: 'sel', body: [{ op: 'add', path: '/metadata/labels', value: { pool: 'gpu' } }] });
    await core.patchNode({ name: 'sel', body: [{ op: 'replace', path: '/metadata/labels', value: { pool: 'cpu' } }] });
    const events = (await pending).body.trim().split('\n').map((l) => JSON.parse(l) as Event);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
  });

  it('answers a too old resourceVersion with an ERROR event carrying 410 Expired, then closes', async () => {
    for (let i = 0; i < 8; i++) {
      await core.createNode({ body: { metadata: { name: `churn-${i}` } } });
    }
    const res = await rawRequest(sim, { path: '/api/v1/nodes?watch=true&resourceVersion=2' });
    const events = res.body.trim().split('\n').map((l) => JSON.parse(l) as Event);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  it('sends initial events and bookmarks when asked', async () => {
    const res = await rawRequest(sim, { path: '/api/v1/nodes?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1' });
    const events = res.body.trim().split('\n').map((l) => JSON.parse(l) as Event);
    expect(events.filter((e) => e.type === 'ADDED').length).toBe((await core.listNode()).items.length);
    const bookmarks = events.filter((e) => e.type === 'BOOKMARK');
    expect(bookmarks[0].object.metadata?.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    expect(bookmarks.length).toBeGreaterThan(1);
  });

  it('feeds client-node Watch and an informer, which relists after a 410', async () => {
    const kc = kubeConfigFor(sim);
    const seen: string[] = [];
    const watch = new Watch(kc);
    const controller = await watch.watch('/api/v1/nodes', { resourceVersion: (await core.listNode()).metadata?.resourceVersion }, (type, obj: V1Node) => seen.push(`${type} ${obj.metadata?.name ?? ''}`), () => undefined);
    await core.createNode({ body: { metadata: { name: 'watched' } } });
    await eventually(() => (seen.includes('ADDED watched') ? true : undefined));
    controller.abort();

    const informer = makeInformer(kc, '/api/v1/nodes', () => core.listNode());
    const added: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (n: V1Node) => added.push(n.metadata?.name ?? ''));
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    await core.createNode({ body: { metadata: { name: 'informed' } } });
    await eventually(() => (informer.get('informed') ? true : undefined));
    await informer.stop();
    for (let i = 0; i < 8; i++) {
      await core.createNode({ body: { metadata: { name: `gone-by-${i}` } } });
    }
    await informer.start();
    await eventually(() => (informer.get('gone-by-7') ? true : undefined));
    expect(added).toContain('gone-by-0');
    await core.createNode({ body: { metadata: { name: 'after-relist' } } });
    await eventually(() => (informer.get('after-relist') ? true : undefined));
    await informer.stop();
    // stop() aborts the open watch request, which client-node reports as an AbortError.
    expect(errors.filter((e) => !(e instanceof Error && e.name === 'AbortError'))).toEqual([]);
  });
});
