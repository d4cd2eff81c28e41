import { CoreV1Api, PatchStrategy, PolicyV1Api, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { apiFailure, eventually, kubeConfigFor } from './testing/kube-clients';

const RS_UID = '3d3a1e4c-0000-4000-8000-000000000001';

function readyPod(name: string, labels: Record<string, string>, ready = true): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'shop', labels, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'db-rs', uid: RS_UID, controller: true }] },
    spec: { nodeName: 'n1', terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'db' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

describe('pods/eviction with PodDisruptionBudgets', () => {
  let sim: KubeSim;
  let core: CoreV1Api;
  let policy: PolicyV1Api;

  beforeAll(async () => {
    sim = await startKubeSim({
      seed: [
        { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } },
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'db-rs', namespace: 'shop', uid: RS_UID }, spec: { replicas: 3, selector: { matchLabels: { app: 'db' } } } },
        readyPod('db-0', { app: 'db' }),
        readyPod('db-1', { app: 'db' }),
        readyPod('db-2', { app: 'db' }, false),
        readyPod('free', { app: 'free' }),
        { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: 'shop' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'db' } } } },
      ] as never,
    });
    const kc = kubeConfigFor(sim);
    core = kc.makeApiClient(CoreV1Api);
    policy = kc.makeApiClient(PolicyV1Api);
  });
  afterAll(async () => {
    await sim.stop();
  });

  const evict = (name: string) => core.createNamespacedPodEviction({ name, namespace: 'shop', body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'shop' } } });

  it('computes the budget status from the matching pods', async () => {
    const pdb = await policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: 'shop' });
    expect(pdb.status).toMatchObject({ currentHealthy: 2, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 0 });
  });

  it('refuses to evict a healthy covered pod with 429 and the DisruptionBudget cause', async () => {
    const failure = await apiFailure(evict('db-0'));
    expect(failure.code).toBe(429);
    expect(failure.status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget db needs 2 healthy pods and has 2 currently' }] },
    });
    expect((await core.readNamespacedPod({ name: 'db-0', namespace: 'shop' })).metadata?.deletionTimestamp).toBeUndefined();
  });

  it('evicts an unhealthy covered pod while the budget is met, and uncovered pods at once', async () => {
    await evict('db-2');
    await evict('free');
    expect(await apiFailure(core.readNamespacedPod({ name: 'db-2', namespace: 'shop' }))).toMatchObject({ code: 404 });
    expect(await apiFailure(core.readNamespacedPod({ name: 'free', namespace: 'shop' }))).toMatchObject({ code: 404 });
  });

  it('allows the eviction once the budget is relaxed, spending one disruption', async () => {
    await policy.patchNamespacedPodDisruptionBudget({ name: 'db', namespace: 'shop', body: { spec: { minAvailable: 1 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect((await policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: 'shop' })).status?.disruptionsAllowed).toBe(1);
    await evict('db-0');
    await eventually(() => core.readNamespacedPod({ name: 'db-0', namespace: 'shop' }).then(() => undefined, () => true));
    const pdb = await policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: 'shop' });
    expect(pdb.status).toMatchObject({ currentHealthy: 1, desiredHealthy: 1, disruptionsAllowed: 0 });
    expect(await apiFailure(evict('db-1'))).toMatchObject({ code: 429 });
  });

  it('uses the pod grace period for evictions and leaves the pod terminating meanwhile', async () => {
    await core.createNamespacedPod({ namespace: 'shop', body: { metadata: { name: 'slow' }, spec: { nodeName: 'n1', terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'x' }] } } });
    await core.replaceNamespacedPodStatus({
      name: 'slow',
      namespace: 'shop',
      body: { ...(await core.readNamespacedPod({ name: 'slow', namespace: 'shop' })), status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
    });
    await evict('slow');
    expect((await core.readNamespacedPod({ name: 'slow', namespace: 'shop' })).metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await eventually(() => core.readNamespacedPod({ name: 'slow', namespace: 'shop' }).then(() => undefined, () => true), 3000);
  });
});
