import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { apiFailure, eventually, kubeConfigFor, rawRequest } from './testing/kube-clients';

const SEED = `
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a, role: worker}}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {zone: b}}
`;

function pod(name: string, nodeName: string, labels: Record<string, string> = {}, grace?: number): V1Pod {
  return {
    metadata: { name, labels },
    spec: { nodeName, terminationGracePeriodSeconds: grace, containers: [{ name: 'c', image: 'busybox:1.36' }] },
  };
}

describe('kube-sim through @kubernetes/client-node', () => {
  let sim: KubeSim;
  let core: CoreV1Api;

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SEED });
    core = kubeConfigFor(sim).makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'work' } } });
    for (let i = 0; i < 6; i++) {
      await core.createNamespacedPod({ namespace: 'work', body: pod(`p${i}`, i % 2 === 0 ? 'n1' : 'n2', { app: i < 3 ? 'web' : 'db', idx: String(i) }) });
    }
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('tries other generated names when one is taken, and answers AlreadyExists only after eight', async () => {
    // With every random draw 0 each generated name is "gen-bbbbb" (the first letter of the alphabet, five times).
    await core.createNamespacedConfigMap({ namespace: 'work', body: { metadata: { name: 'gen-bbbbb' } } });
    const draws = vi.spyOn(Math, 'random').mockReturnValue(0);
    try {
      const exhausted = await apiFailure(core.createNamespacedConfigMap({ namespace: 'work', body: { metadata: { generateName: 'gen-' } } }));
      expect(exhausted).toMatchObject({ code: 409, status: { reason: 'AlreadyExists' } });
      let draw = 0;
      draws.mockImplementation(() => (draw++ < 5 ? 0 : 0.5));
      const created = await core.createNamespacedConfigMap({ namespace: 'work', body: { metadata: { generateName: 'gen-' } } });
      expect(created.metadata?.name).toMatch(/^gen-[b-z2-9]{5}$/);
      expect(created.metadata?.name).not.toBe('gen-bbbbb');
    } finally {
      draws.mockRestore();
    }
  });

  it('creates objects with uid, creationTimestamp and increasing resourceVersions; defaults pods', async () => {
    const a = await core.createNode({ body: { metadata: { name: 'n3' } } });
    const b = await core.createNode({ body: { metadata: { name: 'n4' } } });
    expect(a.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(Number(b.metadata?.resourceVersion)).toBeGreaterThan(Number(a.metadata?.resourceVersion));
    const p = await core.readNamespacedPod({ name: 'p0', namespace: 'work' });
    expect(p.spec?.terminationGracePeriodSeconds).toBe(30);
    expect(p.status?.phase).toBe('Pending');
    const dup = await apiFailure(core.createNode({ body: { metadata: { name: 'n3' } } }));
    expect(dup).toMatchObject({ code: 409, status: { kind: 'Status', reason: 'AlreadyExists', message: 'nodes "n3" already exists', details: { name: 'n3', kind: 'nodes' } } });
  });

  it('answers 404 and 422 with Status objects', async () => {
    expect(await apiFailure(core.readNode({ name: 'nope' }))).toMatchObject({ code: 404, status: { reason: 'NotFound', message: 'nodes "nope" not found' } });
    const bad = await apiFailure(core.createNode({ body: { metadata: { name: 'Bad_Name' } } }));
    expect(bad.code).toBe(422);
    expect(bad.status).toMatchObject({ reason: 'Invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }] } });
    expect(await apiFailure(core.createNamespacedPod({ namespace: 'missing', body: pod('x', 'n1') }))).toMatchObject({ code: 404, status: { message: 'namespaces "missing" not found' } });
  });

  it('refuses an update with a stale resourceVersion (409) and accepts the fresh one', async () => {
    const node = await core.readNode({ name: 'n2' });
    const first = await core.replaceNode({ name: 'n2', body: { ...node, metadata: { ...node.metadata, labels: { zone: 'b', x: '1' } } } });
    expect(first.metadata?.labels).toEqual({ zone: 'b', x: '1' });
    const stale = await apiFailure(core.replaceNode({ name: 'n2', body: { ...node, metadata: { ...node.metadata, labels: { zone: 'c' } } } }));
    expect(stale).toMatchObject({ code: 409, status: { reason: 'Conflict', message: expect.stringContaining('the object has been modified') } });
  });

  it('patches with strategic merge, merge and JSON patch; node status only through nodes/status', async () => {
    const smp = await core.patchNode({ name: 'n1', body: { spec: { unschedulable: true } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    expect(smp.spec?.unschedulable).toBe(true);
    const merge = await core.patchNode({ name: 'n1', body: { metadata: { labels: { role: null, extra: 'y' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(merge.metadata?.labels).toEqual({ zone: 'a', extra: 'y' });
    const json = await core.patchNode({ name: 'n1', body: [{ op: 'replace', path: '/spec/unschedulable', value: false }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    expect(json.spec?.unschedulable).toBe(false);
    const ignored = await core.patchNode({ name: 'n1', body: { status: { conditions: [{ type: 'Ready', status: 'False' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(ignored.status?.conditions?.[0].status).toBe('True');
    const status = await core.patchNodeStatus(
      { name: 'n1', body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletDown' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(status.status?.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'False', reason: 'KubeletDown' })]);
    const conflict = await apiFailure(core.patchNode({ name: 'n1', body: { metadata: { resourceVersion: '1' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    expect(conflict.code).toBe(409);
  });

  it('lists pods cluster-wide and per namespace with field and label selectors', async () => {
    const onN1 = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n1' });
    expect(onN1.items.map((p) => p.metadata?.name)).toEqual(['p0', 'p2', 'p4']);
    const web = await core.listNamespacedPod({ namespace: 'work', labelSelector: 'app=web,idx notin (0)' });
    expect(web.items.map((p) => p.metadata?.name)).toEqual(['p1', 'p2']);
    const set = await core.listNamespacedPod({ namespace: 'work', labelSelector: 'app in (db),idx!=5', fieldSelector: 'spec.nodeName=n2' });
    expect(set.items.map((p) => p.metadata?.name)).toEqual(['p3']);
    const bad = await apiFailure(core.listPodForAllNamespaces({ fieldSelector: 'spec.bogus=1' }));
    expect(bad).toMatchObject({ code: 400, status: { message: 'field label not supported: spec.bogus' } });
  });

  it('paginates with limit and continue', async () => {
    const first = await core.listNamespacedPod({ namespace: 'work', limit: 4 });
    expect(first.items).toHaveLength(4);
    expect(first.metadata?.remainingItemCount).toBe(2);
    const second = await core.listNamespacedPod({ namespace: 'work', limit: 4, _continue: first.metadata?._continue });
    expect(second.items.map((p) => p.metadata?.name)).toEqual(['p4', 'p5']);
    expect(second.metadata?._continue).toBeUndefined();
  });

  it('serves list items without kind/apiVersion and a Table when asked, like the API server', async () => {
    const list = JSON.parse((await rawRequest(sim, { path: '/api/v1/nodes' })).body) as { kind: string; items: Record<string, unknown>[] };
    expect(list.kind).toBe('NodeList');
    expect(list.items[0]).not.toHaveProperty('kind');
    const table = await rawRequest(sim, { path: '/api/v1/nodes', headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
    expect(table.headers['content-type']).toBe('application/json;as=Table;v=v1;g=meta.k8s.io');
    const parsed = JSON.parse(table.body) as { kind: string; columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    expect(parsed.kind).toBe('Table');
    expect(parsed.columnDefinitions.map((c) => c.name).slice(0, 5)).toEqual(['Name', 'Status', 'Roles', 'Age', 'Version']);
    expect(parsed.rows[0].cells[0]).toBe('n1');
  });

  it('deletes pods gracefully: deletionTimestamp first, gone after the grace period; grace 0 at once', async () => {
    await core.createNamespacedPod({ namespace: 'work', body: pod('slow', 'n1', {}, 1) });
    const deleting = await core.deleteNamespacedPod({ name: 'slow', namespace: 'work' });
    expect(deleting.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(deleting.metadata?.deletionGracePeriodSeconds).toBe(1);
    expect((await core.readNamespacedPod({ name: 'slow', namespace: 'work' })).metadata?.deletionTimestamp).toBeDefined();
    const started = Date.now();
    await eventually(() => core.readNamespacedPod({ name: 'slow', namespace: 'work' }).then(() => undefined, () => true), 3000);
    expect(Date.now() - started).toBeGreaterThan(500);
    await core.createNamespacedPod({ namespace: 'work', body: pod('fast', 'n1', {}, 30) });
    await core.deleteNamespacedPod({ name: 'fast', namespace: 'work', gracePeriodSeconds: 0 });
    expect(await apiFailure(core.readNamespacedPod({ name: 'fast', namespace: 'work' }))).toMatchObject({ code: 404 });
  });

  it('lets a second delete only shorten the grace period', async () => {
    await core.createNamespacedPod({ namespace: 'work', body: pod('twice', 'n1', {}, 30) });
    await core.deleteNamespacedPod({ name: 'twice', namespace: 'work' });
    const first = await core.readNamespacedPod({ name: 'twice', namespace: 'work' });
    await core.deleteNamespacedPod({ name: 'twice', namespace: 'work', gracePeriodSeconds: 60 });
    expect((await core.readNamespacedPod({ name: 'twice', namespace: 'work' })).metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    await core.deleteNamespacedPod({ name: 'twice', namespace: 'work', gracePeriodSeconds: 0 });
    expect(await apiFailure(core.readNamespacedPod({ name: 'twice', namespace: 'work' }))).toMatchObject({ code: 404 });
  });

  it('keeps finalized objects until their finalizers are removed', async () => {
    await core.createNamespacedConfigMap({ namespace: 'work', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    await core.deleteNamespacedConfigMap({ name: 'held', namespace: 'work' });
    expect((await core.readNamespacedConfigMap({ name: 'held', namespace: 'work' })).metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await core.patchNamespacedConfigMap({ name: 'held', namespace: 'work', body: { metadata: { finalizers: null } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(await apiFailure(core.readNamespacedConfigMap({ name: 'held', namespace: 'work' }))).toMatchObject({ code: 404 });
  });

  it('garbage-collects dependents of a deleted owner', async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: 'work', body: { metadata: { name: 'owner' } } });
    await core.createNamespacedConfigMap({
      namespace: 'work',
      body: { metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' }] } },
    });
    await core.deleteNamespacedConfigMap({ name: 'owner', namespace: 'work' });
    expect(await apiFailure(core.readNamespacedConfigMap({ name: 'dependent', namespace: 'work' }))).toMatchObject({ code: 404 });
  });

  it('gives leases optimistic concurrency for leader election', async () => {
    const leases = kubeConfigFor(sim).makeApiClient(CoordinationV1Api);
    const created = await leases.createNamespacedLease({ namespace: 'kube-node-lease', body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } } });
    const taken = await leases.replaceNamespacedLease({ name: 'leader', namespace: 'kube-node-lease', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } });
    expect(taken.spec?.holderIdentity).toBe('b');
    const lost = await apiFailure(leases.replaceNamespacedLease({ name: 'leader', namespace: 'kube-node-lease', body: { ...created, spec: { ...created.spec, holderIdentity: 'c' } } }));
    expect(lost).toMatchObject({ code: 409, status: { reason: 'Conflict', details: { group: 'coordination.k8s.io', kind: 'leases' } } });
    expect((await leases.readNamespacedLease({ name: 'leader', namespace: 'kube-node-lease' })).spec?.holderIdentity).toBe('b');
  });
});
