import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, V1MicroTime } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { apiFailure, kubeConfigFor, rawRequest } from './testing/kube-clients';

const ADMIN = { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] };
const nodes = (count: number): string =>
  Array.from({ length: count }, (_, i) => `apiVersion: v1\nkind: Node\nmetadata: {name: node-${String(i).padStart(2, '0')}}`).join('\n---\n');

describe('lists at a resourceVersion: continue tokens, compaction, resourceVersionMatch', () => {
  let sim: KubeSim;
  let core: CoreV1Api;

  beforeAll(async () => {
    sim = await startKubeSim({ seed: nodes(6) });
    core = kubeConfigFor(sim).makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('serves page 2 from the snapshot of page 1: later writes are not visible', async () => {
    const first = await core.listNode({ limit: 3 });
    expect(first.items.map((n) => n.metadata?.name)).toEqual(['node-00', 'node-01', 'node-02']);
    await core.patchNode({ name: 'node-04', body: { metadata: { labels: { written: 'between-pages' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await core.deleteNode({ name: 'node-05' });
    await core.createNode({ body: { metadata: { name: 'node-03a' } } });
    const second = await core.listNode({ limit: 3, _continue: first.metadata?._continue });
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    expect(second.items.map((n) => n.metadata?.name)).toEqual(['node-03', 'node-04', 'node-05']);
    expect(second.items[1].metadata?.labels?.['written']).toBeUndefined();
    expect(second.metadata?._continue).toBeUndefined();
    const fresh = await core.listNode({});
    expect(fresh.items.map((n) => n.metadata?.name)).toEqual(['node-00', 'node-01', 'node-02', 'node-03', 'node-03a', 'node-04']);
    expect(fresh.items.find((n) => n.metadata?.name === 'node-04')?.metadata?.labels?.['written']).toBe('between-pages');
  });

  it('answers an old continue token past compaction with 410 and a token to go on inconsistently', async () => {
    const first = await core.listNode({ limit: 2 });
    await core.createNode({ body: { metadata: { name: 'node-01b' } } });
    sim.compact();
    const gone = await apiFailure(core.listNode({ limit: 2, _continue: first.metadata?._continue }));
    expect(gone.code).toBe(410);
    expect(gone.status).toMatchObject({ reason: 'Expired', message: expect.stringMatching(/^The provided continue parameter is too old to display a consistent list result\./) });
    const token = (gone.status['metadata'] as { continue?: string }).continue ?? '';
    const rest = await core.listNode({ limit: 2, _continue: token });
    expect(rest.items.map((n) => n.metadata?.name)).toEqual(['node-01b', 'node-02']);
    expect(Number(rest.metadata?.resourceVersion)).toBeGreaterThan(Number(first.metadata?.resourceVersion));
  });

  it('lists at an exact resourceVersion until it is compacted, refuses bad combinations, waits for future ones', async () => {
    const before = (await core.listNode()).metadata?.resourceVersion ?? '';
    await core.deleteNode({ name: 'node-00' });
    const exact = await core.listNode({ resourceVersion: before, resourceVersionMatch: 'Exact' });
    expect(exact.items.map((n) => n.metadata?.name)).toContain('node-00');
    expect(exact.metadata?.resourceVersion).toBe(before);
    sim.compact();
    expect(await apiFailure(core.listNode({ resourceVersion: before, resourceVersionMatch: 'Exact' }))).toMatchObject({ code: 410, status: { message: 'The resourceVersion for the provided list is too old.' } });
    expect((await apiFailure(core.listNode({ resourceVersionMatch: 'Exact' }))).status['message']).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const future = Number(sim.store.resourceVersion) + 1;
    const waiting = core.listNode({ resourceVersion: String(future), resourceVersionMatch: 'NotOlderThan' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await core.createNode({ body: { metadata: { name: 'node-future' } } });
    expect((await waiting).items.map((n) => n.metadata?.name)).toContain('node-future');
  });
});

describe('the watch cache window and watch timeouts', () => {
  it('grows while events are fresh, up to its bound, then answers 410 for resourceVersions that fell out', async () => {
    const sim = await startKubeSim({ watchCache: { lowerBound: 4, upperBound: 8, eventFreshMs: 1000 }, minRequestTimeoutSeconds: 1 });
    try {
      const start = sim.store.resourceVersion;
      const def = sim.resource('configmaps');
      const write = (name: string): void => {
        sim.api.create(def, 'default', { metadata: { name } }, { user: ADMIN });
      };
      // Within the freshness window the cache grows to its upper bound instead of dropping events.
      for (let i = 0; i < 8; i++) {
        write(`fresh-${i}`);
      }
      expect(sim.store.eventsSince(def, start)?.map((e) => e.object.metadata.name)).toHaveLength(8);
      write('overflow');
      expect(sim.store.eventsSince(def, start)).toBeUndefined();
      const res = await rawRequest(sim, { path: `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${start}` });
      expect(JSON.parse(res.body.trim())).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired', message: expect.stringMatching(/^too old resource version: \d+ \(\d+\)$/) } });
    } finally {
      await sim.stop();
    }
  });

  it('ends watches without timeoutSeconds after minRequestTimeout × rand[1, 2), the given timeoutSeconds otherwise', async () => {
    const sim = await startKubeSim({ minRequestTimeoutSeconds: 0.3 });
    try {
      const durations = await Promise.all(
        Array.from({ length: 6 }, async () => {
          const started = Date.now();
          await rawRequest(sim, { path: '/api/v1/nodes?watch=1' });
          return Date.now() - started;
        }),
      );
      expect(Math.min(...durations)).toBeGreaterThanOrEqual(290);
      // At most 600 ms by the rule; the rest is room for a busy machine.
      expect(Math.max(...durations)).toBeLessThan(1500);
      expect(new Set(durations.map((d) => Math.round(d / 20))).size).toBeGreaterThan(1);
      const started = Date.now();
      await rawRequest(sim, { path: '/api/v1/nodes?watch=1&timeoutSeconds=1' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    } finally {
      await sim.stop();
    }
  });

  it('times out a watch from a resourceVersion the server has not reached with 504', async () => {
    const sim = await startKubeSim({ tooLargeResourceVersionWaitMs: 100 });
    try {
      const res = await rawRequest(sim, { path: `/api/v1/nodes?watch=1&resourceVersion=${sim.store.resourceVersion + 50}` });
      expect(res.status).toBe(504);
      expect(JSON.parse(res.body)).toMatchObject({ reason: 'Timeout', message: `Timeout: Too large resource version: ${sim.store.resourceVersion + 50}, current: ${sim.store.resourceVersion}` });
    } finally {
      await sim.stop();
    }
  });
});

describe('Time and MicroTime fields', () => {
  let sim: KubeSim;

  beforeAll(async () => {
    sim = await startKubeSim();
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('refuses a Lease renewTime without six fractional digits with the real 400, and stores microseconds', async () => {
    const leases = kubeConfigFor(sim).makeApiClient(CoordinationV1Api);
    const stamp = new V1MicroTime('2026-12-01T10:00:00.123Z');
    const created = await leases.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'l' }, spec: { holderIdentity: 'a', renewTime: stamp, acquireTime: stamp } } });
    expect(sim.store.get(sim.resource('leases'), 'default', 'l')?.spec?.['renewTime']).toBe('2026-12-01T10:00:00.123000Z');
    const body = JSON.stringify({ ...created, spec: { ...created.spec, renewTime: '2026-12-01T10:00:01.123Z' } });
    const res = await rawRequest(sim, { method: 'PUT', path: '/apis/coordination.k8s.io/v1/namespaces/default/leases/l', headers: { 'Content-Type': 'application/json' }, body });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({
      reason: 'BadRequest',
      message: 'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-12-01T10:00:01.123Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".123Z" as ".000000"',
    });
  });

  it('accepts any RFC 3339 Time, stored in UTC at second precision, and refuses other formats', async () => {
    const core = kubeConfigFor(sim).makeApiClient(CoreV1Api);
    const post = (body: unknown) => rawRequest(sim, { method: 'POST', path: '/api/v1/namespaces/default/events', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const ok = await post({ metadata: { name: 'e1' }, involvedObject: { kind: 'Node', name: 'n' }, firstTimestamp: '2026-12-01T12:00:00.987+02:00', eventTime: '2026-12-01T10:00:00.000001Z' });
    expect(ok.status).toBe(201);
    const stored = await core.readNamespacedEvent({ name: 'e1', namespace: 'default' });
    expect(sim.store.get(sim.resource('events'), 'default', 'e1')).toMatchObject({ firstTimestamp: '2026-12-01T10:00:00Z', eventTime: '2026-12-01T10:00:00.000001Z' });
    expect(stored.metadata?.name).toBe('e1');
    const bad = await post({ metadata: { name: 'e2', creationTimestamp: '2026-12-01 10:00:00' }, involvedObject: { kind: 'Node', name: 'n' } });
    expect(JSON.parse(bad.body)['message']).toBe('Event in version "v1" cannot be handled as a Event: parsing time "2026-12-01 10:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse " 10:00:00" as "T"');
    const micro = await post({ metadata: { name: 'e3' }, involvedObject: { kind: 'Node', name: 'n' }, eventTime: '2026-12-01T10:00:00Z' });
    expect(micro.status).toBe(400);
  });
});
