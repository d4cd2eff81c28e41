import { afterEach, describe, expect, it } from 'vitest';
import { formatMessage } from '@ccos/shared/messages';
import { type SeedOwner, seedBudget, seedController, seedNode, seedOf, seedPod } from '../testing/drain-seed';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { drainNode, planDrain, type DrainEvent } from './drain';
import type { KubeClient } from './kube-client';

const RS_UID = 'b1f0c7e2-0000-4000-8000-0000000000a1';
const CACHE_RS_UID = 'b1f0c7e2-0000-4000-8000-0000000000a2';
const DS_UID = 'b1f0c7e2-0000-4000-8000-0000000000d5';
const GONE_DS_UID = 'b1f0c7e2-0000-4000-8000-0000000000d6';
const DB_RS_UID = 'b1f0c7e2-0000-4000-8000-0000000000db';

const WEB: SeedOwner = { kind: 'ReplicaSet', name: 'web', uid: RS_UID };
const CACHE: SeedOwner = { kind: 'ReplicaSet', name: 'cache', uid: CACHE_RS_UID };
const DB: SeedOwner = { kind: 'ReplicaSet', name: 'db', uid: DB_RS_UID };
const AGENT: SeedOwner = { kind: 'DaemonSet', name: 'agent', uid: DS_UID };

/** w1 holds one pod of every class kubectl drain tells apart; w2 a pod guarded by a PDB with no disruption left. */
const SEED = seedOf(
  seedNode('w1'),
  seedNode('w2'),
  seedController(WEB, 'shop', 'web'),
  seedController(CACHE, 'shop', 'cache'),
  seedController(DB, 'shop', 'db'),
  seedController(AGENT, 'kube-system', 'agent'),
  seedPod({ name: 'web-1', namespace: 'shop', node: 'w1', app: 'web', owner: WEB, graceSeconds: 1 }),
  seedPod({ name: 'cache-1', namespace: 'shop', node: 'w1', app: 'cache', owner: CACHE, graceSeconds: 0, emptyDir: true }),
  seedPod({ name: 'agent-w1', namespace: 'kube-system', node: 'w1', app: 'agent', owner: AGENT }),
  seedPod({ name: 'old-agent-w1', namespace: 'kube-system', node: 'w1', owner: { kind: 'DaemonSet', name: 'old-agent', uid: GONE_DS_UID }, graceSeconds: 0 }),
  seedPod({ name: 'etcd-w1', namespace: 'kube-system', node: 'w1', mirror: true }),
  seedPod({ name: 'handmade', namespace: 'default', node: 'w1', graceSeconds: 0 }),
  seedPod({ name: 'job-done', namespace: 'default', node: 'w1', emptyDir: true, state: 'Succeeded' }),
  seedPod({ name: 'db-1', namespace: 'shop', node: 'w2', app: 'db', owner: DB, graceSeconds: 0 }),
  seedBudget('db-budget', 'shop', 'db', 'minAvailable: 1'),
  seedBudget('web-budget', 'shop', 'web', 'maxUnavailable: 1'),
);

const ALL = { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true, retryIntervalMs: 50, pollIntervalMs: 50 };

describe('drain', () => {
  let world: SimWithClient | undefined;

  afterEach(async () => {
    await world?.stop();
    world = undefined;
  });

  const start = async (): Promise<KubeClient> => {
    world = await startSimWithClient({ seed: SEED });
    return world.client;
  };
  const podsOn = async (client: KubeClient, node: string): Promise<string[]> =>
    (await client.call('list', (o) => client.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` }, o))).items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort();
  const cordoned = async (client: KubeClient, node: string): Promise<boolean> => (await client.call('read', (o) => client.core.readNode({ name: node }, o))).spec?.unschedulable === true;

  it('plans like kubectl: classes, actions, refusal and warning lines, budgets', async () => {
    const client = await start();
    const strict = await planDrain(client, 'w1');
    expect(Object.fromEntries(strict.pods.map((p) => [p.pod, [p.class, p.action]]))).toEqual({
      'default/handmade': ['unmanaged', 'refuse'],
      'default/job-done': ['finished', 'evict'],
      'kube-system/agent-w1': ['daemonset', 'refuse'],
      'kube-system/etcd-w1': ['mirror', 'skip'],
      'kube-system/old-agent-w1': ['orphaned-daemonset', 'refuse'],
      'shop/cache-1': ['local-storage', 'refuse'],
      'shop/web-1': ['managed', 'evict'],
    });
    expect(strict.refusals).toEqual([
      'cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/agent-w1',
      'cannot delete Pods with local storage (use --delete-emptydir-data to override): shop/cache-1',
      'cannot delete Pods that declare no controller (use --force to override): default/handmade',
      'cannot delete daemonsets.apps "old-agent" not found: kube-system/old-agent-w1',
    ]);
    // The same lines by code: kubectl's own words in English, and in Chinese for a Chinese console.
    expect(strict.refusalsCoded.map((line) => formatMessage('en', line.code, line.params))).toEqual(strict.refusals);
    expect(strict.refusalsCoded.map((line) => formatMessage('zh-CN', line.code, line.params))).toEqual([
      '由 DaemonSet 管理的 Pod（使用 --ignore-daemonsets 可忽略它们），无法删除：kube-system/agent-w1',
      '使用本地存储的 Pod（使用 --delete-emptydir-data 可强制驱逐），无法删除：shop/cache-1',
      '未声明控制器的 Pod（使用 --force 可强制驱逐），无法删除：default/handmade',
      '找不到 DaemonSet old-agent（daemonsets.apps），无法删除：kube-system/old-agent-w1',
    ]);
    expect(strict.pods.map((p) => formatMessage('en', p.reasonCoded.code, p.reasonCoded.params))).toEqual(strict.pods.map((p) => p.reason));
    expect(formatMessage('zh-CN', strict.refusalCoded?.code ?? 'drain.raw', strict.refusalCoded?.params)).toMatch(/^无法驱逐节点“w1”上的 Pod，原因：\[由 DaemonSet 管理的 Pod.*：kube-system\/old-agent-w1\]$/);
    expect(strict.allowed).toBe(false);
    expect(strict.refusal).toMatch(/^unable to drain node "w1" due to error: \[cannot delete DaemonSet-managed Pods .*: kube-system\/old-agent-w1\]$/);
    expect(strict.budgets).toEqual([{ namespace: 'shop', name: 'web-budget', disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 0, pods: ['shop/web-1'] }]);
    expect(strict.pods.find((p) => p.pod === 'shop/web-1')).toMatchObject({ reason: 'managed by ReplicaSet/web', controller: 'ReplicaSet/web', pdbs: ['web-budget'] });

    const relaxed = await planDrain(client, 'w1', { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true });
    expect(relaxed.allowed).toBe(true);
    expect(relaxed.refusals).toEqual([]);
    expect(relaxed.pods.filter((p) => p.action === 'evict').map((p) => p.pod)).toEqual(['default/handmade', 'default/job-done', 'kube-system/old-agent-w1', 'shop/cache-1', 'shop/web-1']);
    expect(relaxed.warnings).toEqual([
      'ignoring DaemonSet-managed Pods: kube-system/agent-w1',
      'deleting Pods with local storage: shop/cache-1',
      'deleting Pods that declare no controller: default/handmade',
      'daemonsets.apps "old-agent" not found: kube-system/old-agent-w1',
    ]);
    expect(relaxed.warningsCoded.map((line) => formatMessage('en', line.code, line.params))).toEqual(relaxed.warnings);
    expect(formatMessage('zh-CN', relaxed.warningsCoded[0].code, relaxed.warningsCoded[0].params)).toBe('忽略由 DaemonSet 管理的 Pod：kube-system/agent-w1');
    expect(relaxed.pods.map((p) => formatMessage('en', p.reasonCoded.code, p.reasonCoded.params))).toEqual(relaxed.pods.map((p) => p.reason));
    // Planning changes nothing.
    expect(await cordoned(client, 'w1')).toBe(false);
  });

  it('refuses with the list of offending pods when the options do not allow a class: cordoned, nothing evicted', async () => {
    const client = await start();
    const before = await podsOn(client, 'w1');
    const events: DrainEvent[] = [];
    const result = await drainNode(client, 'w1', { ignoreDaemonSets: true, deleteEmptyDirData: true }, (e) => events.push(e));
    expect(result).toMatchObject({
      ok: false,
      failure: 'REFUSED',
      reason:
        'unable to drain node "w1" due to error: [cannot delete Pods that declare no controller (use --force to override): default/handmade, cannot delete daemonsets.apps "old-agent" not found: kube-system/old-agent-w1]',
      blocking: [
        { pod: 'default/handmade', message: 'Pods that declare no controller (use --force to override)' },
        { pod: 'kube-system/old-agent-w1', message: 'daemonsets.apps "old-agent" not found' },
      ],
    });
    expect(events.map((e) => e.type)).toEqual(['cordoned', 'done']);
    expect(await podsOn(client, 'w1')).toEqual(before);
    expect(await cordoned(client, 'w1')).toBe(true);
  });

  it('evicts what the options allow, skips DaemonSet and mirror pods, and reports each step', async () => {
    const client = await start();
    const events: DrainEvent[] = [];
    const result = await drainNode(client, 'w1', ALL, (e) => events.push(e));
    expect(result).toMatchObject({
      ok: true,
      evicted: ['default/handmade', 'default/job-done', 'kube-system/old-agent-w1', 'shop/cache-1', 'shop/web-1'],
      skipped: [
        { pod: 'kube-system/agent-w1', reason: 'ignoring DaemonSet-managed Pods' },
        { pod: 'kube-system/etcd-w1', reason: 'mirror pod of a static pod' },
      ],
    });
    expect(await podsOn(client, 'w1')).toEqual(['kube-system/agent-w1', 'kube-system/etcd-w1']);
    expect(events[0]).toEqual({ type: 'cordoned', node: 'w1', alreadyCordoned: false });
    expect(events.at(-1)).toEqual({ type: 'done', result });
    for (const pod of result.ok ? result.evicted : []) {
      const kinds = events.filter((e) => 'pod' in e && e.pod === pod).map((e) => e.type);
      expect(kinds).toEqual(['pod-evicting', 'pod-evicted', 'pod-deleted']);
    }
    expect(events.filter((e) => e.type === 'pod-skipped')).toHaveLength(2);
  });

  it('honours gracePeriodSeconds: -1 waits for the pod’s own grace period, 0 deletes at once', async () => {
    const client = await start();
    const timing = async (gracePeriodSeconds: number): Promise<number> => {
      let evictedAt = 0;
      let deletedAt = 0;
      await drainNode(client, 'w1', { ...ALL, gracePeriodSeconds }, (e) => {
        if (e.type === 'pod-evicted' && e.pod === 'shop/web-1') {
          evictedAt = Date.now();
        }
        if (e.type === 'pod-deleted' && e.pod === 'shop/web-1') {
          deletedAt = Date.now();
        }
      });
      return deletedAt - evictedAt;
    };
    // web-1's own terminationGracePeriodSeconds is 1.
    expect(await timing(-1)).toBeGreaterThanOrEqual(900);
    await world?.stop();
    await start();
    expect(await timing(0)).toBeLessThan(500);
  });

  it('keeps at most evictionConcurrency evictions in flight', async () => {
    const pods = Array.from({ length: 30 }, (_, i) => seedPod({ name: `p${i}`, namespace: 'shop', node: 'w9', owner: WEB, graceSeconds: 0 }));
    world = await startSimWithClient({ seed: seedOf(seedNode('w9'), ...pods) });
    const inner = world.client;
    let inFlight = 0;
    let peak = 0;
    const counting: KubeClient = {
      ...inner,
      call: async (operation, run, signal) => {
        const eviction = operation.startsWith('evict ');
        inFlight += eviction ? 1 : 0;
        peak = Math.max(peak, inFlight);
        try {
          return await inner.call(operation, run, signal);
        } finally {
          inFlight -= eviction ? 1 : 0;
        }
      },
    };
    const result = await drainNode(counting, 'w9', { ...ALL, evictionConcurrency: 3 });
    expect(result.ok && result.evicted).toHaveLength(30);
    expect(peak).toBe(3);
  });

  it('reports a blocking PodDisruptionBudget live and finishes once the budget allows the eviction', async () => {
    const client = await start();
    const events: DrainEvent[] = [];
    let resolveBlocked: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => {
      resolveBlocked = resolve;
    });
    const drained = drainNode(client, 'w2', { ...ALL, retryIntervalMs: 100 }, (e) => {
      events.push(e);
      if (e.type === 'pod-blocked') {
        resolveBlocked();
      }
    });
    await blocked;
    const blockedEvent = events.find((e) => e.type === 'pod-blocked');
    expect(blockedEvent?.type === 'pod-blocked' && formatMessage('zh-CN', blockedEvent.coded.code, blockedEvent.coded.params)).toBe(
      '无法驱逐该 Pod：驱逐会违反该 Pod 的 PodDisruptionBudget。PodDisruptionBudget db-budget 需要 1 个健康的 Pod，当前有 1 个',
    );
    expect(blockedEvent).toMatchObject({
      type: 'pod-blocked',
      pod: 'shop/db-1',
      pdb: 'db-budget',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      detail: 'The disruption budget db-budget needs 1 healthy pods and has 1 currently',
      retryInMs: 100,
    });
    await client.call('patch pdb', (o) => client.policy.patchNamespacedPodDisruptionBudget({ name: 'db-budget', namespace: 'shop', body: [{ op: 'replace', path: '/spec/minAvailable', value: 0 }] }, o));
    expect(await drained).toEqual({ ok: true, evicted: ['shop/db-1'], skipped: [] });
    expect(events.filter((e) => e.type === 'pod-evicting').length).toBeGreaterThan(1);
  });

  it('deletes a pod its budget keeps refusing once told to go past the budget, and only that pod', async () => {
    const client = await start();
    const events: DrainEvent[] = [];
    const bypass = new AbortController();
    const drained = drainNode(client, 'w2', { ...ALL, retryIntervalMs: 60_000, bypassBudgets: bypass.signal }, (e) => {
      events.push(e);
      if (e.type === 'pod-blocked') {
        bypass.abort();
      }
    });
    // The retry is a minute away: going past the budget does not wait for it.
    const started = Date.now();
    expect(await drained).toEqual({ ok: true, evicted: ['shop/db-1'], skipped: [] });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(events.map((e) => e.type).filter((type) => type.startsWith('pod-'))).toEqual(['pod-evicting', 'pod-blocked', 'pod-deleted-past-budget', 'pod-deleted']);
    expect(events.find((e) => e.type === 'pod-deleted-past-budget')).toEqual({ type: 'pod-deleted-past-budget', pod: 'shop/db-1', pdb: 'db-budget' });
    expect(await podsOn(client, 'w2')).toEqual([]);
  });

  it('ends a drain that outlives timeoutSeconds, naming the blocking pods and their budget', async () => {
    const client = await start();
    const events: DrainEvent[] = [];
    const started = Date.now();
    const result = await drainNode(client, 'w2', { ...ALL, timeoutSeconds: 1, retryIntervalMs: 5000 }, (e) => events.push(e));
    expect(Date.now() - started).toBeLessThan(2500);
    const blocking = [{ pod: 'shop/db-1', pdb: 'db-budget', message: "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget db-budget needs 1 healthy pods and has 1 currently" }];
    expect(result).toMatchObject({ ok: false, failure: 'TIMEOUT', reason: 'the drain did not finish within 1 s; still on the node: shop/db-1', blocking });
    expect(!result.ok && formatMessage('zh-CN', result.reasonCoded.code, result.reasonCoded.params)).toBe('驱逐未能在 1 秒内完成；仍在节点上的 Pod：shop/db-1');
    expect(events.filter((e) => e.type === 'timeout')).toMatchObject([{ type: 'timeout', pending: blocking }]);
    expect(await podsOn(client, 'w2')).toEqual(['shop/db-1']);
    expect(await cordoned(client, 'w2')).toBe(true);
  });

  it('stops when cancelled, leaving the node cordoned', async () => {
    const client = await start();
    const controller = new AbortController();
    const drained = drainNode(client, 'w2', { ...ALL, signal: controller.signal }, (e) => {
      if (e.type === 'pod-blocked') {
        controller.abort();
      }
    });
    expect(await drained).toMatchObject({ ok: false, failure: 'CANCELLED', blocking: [{ pod: 'shop/db-1', pdb: 'db-budget' }] });
    expect(await cordoned(client, 'w2')).toBe(true);
  });

  it('refuses disableEviction and invalid options before touching the node, and reports a missing node', async () => {
    const client = await start();
    expect(await drainNode(client, 'w1', { ...ALL, disableEviction: true })).toMatchObject({ ok: false, failure: 'UNSUPPORTED_OPTION', reason: expect.stringContaining('bypasses PodDisruptionBudgets') });
    expect(await drainNode(client, 'w1', { evictionConcurrency: 0 })).toMatchObject({ ok: false, failure: 'UNSUPPORTED_OPTION' });
    expect(await cordoned(client, 'w1')).toBe(false);
    expect(await drainNode(client, 'w404', ALL)).toMatchObject({ ok: false, failure: 'NODE_NOT_FOUND', reason: 'nodes "w404" not found', blocking: [] });
  });
});
