import { AppsV1Api, CoreV1Api, PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { apiFailure, eventually, kubeConfigFor } from './testing/kube-clients';

const node = (name: string, extra = '') => `apiVersion: v1\nkind: Node\nmetadata: {name: ${name}, labels: {zone: ${name[0]}}}\n${extra}status: {conditions: [{type: Ready, status: "True"}]}`;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('ReplicaSet and Deployment controllers, the scheduler and the disruption controller loop', () => {
  let sim: KubeSim | undefined;

  afterEach(async () => {
    await sim?.stop();
    sim = undefined;
  });

  it('replaces an evicted pod; the replacement stays Pending until a schedulable node exists, then lands there', async () => {
    sim = await startKubeSim({ workloadControllers: true, podStartupSeconds: 0.05, seed: [node('a1'), node('b1', 'spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n')].join('\n---\n') });
    const kc = kubeConfigFor(sim);
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { nodeSelector: { zone: 'a' }, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'web' }] } } } },
    });
    await sim.controllersIdle();
    const running = await eventually(async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' })).items;
      return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running') ? pods : undefined;
    });
    expect(running.map((p) => p.spec?.nodeName)).toEqual(['a1', 'a1']);
    expect(running.every((p) => /^web-[a-z0-9]{10}-[a-z0-9]{5}$/.test(p.metadata?.name ?? ''))).toBe(true);
    const deployment = await eventually(async () => {
      const d = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
      return d.status?.availableReplicas === 2 ? d : undefined;
    });
    expect(deployment.status).toMatchObject({ replicas: 2, readyReplicas: 2, updatedReplicas: 2, observedGeneration: 1 });

    await core.patchNode({ name: 'a1', body: { spec: { unschedulable: true } } }, merge);
    const victim = running[0].metadata?.name ?? '';
    await core.createNamespacedPodEviction({ name: victim, namespace: 'default', body: { metadata: { name: victim } } });
    await eventually(async () => ((await core.listNamespacedPod({ namespace: 'default' })).items.some((p) => p.metadata?.name === victim) ? undefined : true));
    await sim.controllersIdle();
    const pending = (await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.nodeName=' })).items;
    expect(pending).toHaveLength(1);
    expect(pending[0].status?.phase).toBe('Pending');
    expect(pending[0].status?.conditions?.find((c) => c.type === 'PodScheduled')).toMatchObject({
      status: 'False',
      reason: 'Unschedulable',
      message: '0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    });

    await core.createNode({ body: { metadata: { name: 'a2', labels: { zone: 'a' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
    const landed = await eventually(async () => {
      const pod = await core.readNamespacedPod({ name: pending[0].metadata?.name ?? '', namespace: 'default' });
      return pod.status?.phase === 'Running' ? pod : undefined;
    });
    expect(landed.spec?.nodeName).toBe('a2');
  });

  it('scales a ReplicaSet down by deleting the pods that matter least, and honours tolerations', async () => {
    sim = await startKubeSim({ workloadControllers: true, seed: node('b1', 'spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n') });
    const kc = kubeConfigFor(sim);
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const template = (tolerate: boolean) => ({
      metadata: { labels: { app: 'gpu' } },
      spec: { containers: [{ name: 'c', image: 'x' }], ...(tolerate ? { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] } : {}) },
    });
    await apps.createNamespacedReplicaSet({ namespace: 'default', body: { metadata: { name: 'gpu' }, spec: { replicas: 3, selector: { matchLabels: { app: 'gpu' } }, template: template(true) } } });
    await sim.controllersIdle();
    const pods = (await core.listNamespacedPod({ namespace: 'default' })).items;
    expect(pods.map((p) => p.spec?.nodeName)).toEqual(['b1', 'b1', 'b1']);
    await apps.createNamespacedReplicaSet({ namespace: 'default', body: { metadata: { name: 'plain' }, spec: { replicas: 1, selector: { matchLabels: { app: 'plain' } }, template: { ...template(false), metadata: { labels: { app: 'plain' } } } } } });
    await sim.controllersIdle();
    const plain = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=plain' })).items[0];
    expect(plain.spec?.nodeName).toBeUndefined();
    expect(plain.status?.conditions?.[0].message).toBe('0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.');
    await apps.patchNamespacedReplicaSet({ name: 'gpu', namespace: 'default', body: { spec: { replicas: 1 } } }, merge);
    await sim.controllersIdle();
    const rs = await apps.readNamespacedReplicaSet({ name: 'gpu', namespace: 'default' });
    expect(rs.status).toMatchObject({ replicas: 1, observedGeneration: 2 });
  });

  it('answers evictions with "still being processed" until the disruption controller saw the budget’s new spec', async () => {
    const RS_UID = 'f1f0c7e2-0000-4000-8000-0000000000a1';
    sim = await startKubeSim({
      pdbSyncDelayMs: 300,
      seed: `${node('n1')}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: db, namespace: default, uid: ${RS_UID}}
spec: {replicas: 2, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}
${['db-0', 'db-1']
  .map(
    (name) => `---
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default, labels: {app: db}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: db, uid: ${RS_UID}, controller: true}]}
spec: {nodeName: n1, terminationGracePeriodSeconds: 0, containers: [{name: c, image: db}]}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}`,
  )
  .join('\n')}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: default}
spec: {minAvailable: 2, selector: {matchLabels: {app: db}}}`,
    });
    const kc = kubeConfigFor(sim);
    const policy = kc.makeApiClient(PolicyV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    expect((await policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: 'default' })).status).toMatchObject({ observedGeneration: 1, disruptionsAllowed: 0 });
    await policy.patchNamespacedPodDisruptionBudget({ name: 'db', namespace: 'default', body: { spec: { minAvailable: 1 } } }, merge);
    const evict = () => core.createNamespacedPodEviction({ name: 'db-0', namespace: 'default', body: { metadata: { name: 'db-0' } } });
    expect(await apiFailure(evict())).toMatchObject({
      code: 429,
      status: { message: "Cannot evict pod as it would violate the pod's disruption budget.", details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget db is still being processed by the server.' }] } },
    });
    await sim.controllersIdle();
    expect((await policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: 'default' })).status).toMatchObject({ observedGeneration: 2, disruptionsAllowed: 1 });
    await evict();
  });
});
