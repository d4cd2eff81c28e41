import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, V1MicroTime } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, type KubeSim } from './kube-sim';
import { eventually, kubeConfigFor } from './testing/kube-clients';

describe('node lifecycle and pod garbage collection', () => {
  let sim: KubeSim;
  let core: CoreV1Api;

  beforeAll(async () => {
    sim = await startKubeSim({
      nodeMonitorGracePeriodSeconds: 0.4,
      orphanedPodGcSeconds: 0.2,
      seed: `
apiVersion: v1
kind: Node
metadata: {name: quiet}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: agent-gone, namespace: kube-system}
spec: {nodeName: gone, containers: [{name: c, image: agent}]}
status: {phase: Running}
---
apiVersion: v1
kind: Node
metadata: {name: gone}
`,
    });
    core = kubeConfigFor(sim).makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('turns a node whose kubelet stops heartbeating Unknown and taints it, until it reports Ready again', async () => {
    await core.createNode({ body: { metadata: { name: 'beating' } } });
    const heartbeat = () =>
      core.patchNodeStatus(
        { name: 'beating', body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date().toISOString() }] } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    // The controller cannot have seen this heartbeat before it was sent.
    const beatAt = Date.now();
    await heartbeat();
    const leases = kubeConfigFor(sim).makeApiClient(CoordinationV1Api);
    await leases.createNamespacedLease({ namespace: 'kube-node-lease', body: { metadata: { name: 'beating' }, spec: { holderIdentity: 'beating', renewTime: new V1MicroTime() } } });

    const unknown = await eventually(async () => {
      const node = await core.readNode({ name: 'beating' });
      return node.status?.conditions?.[0].status === 'Unknown' ? node : undefined;
    });
    // Not before the grace period (0.4 s) without a heartbeat had passed.
    expect(Date.now() - beatAt).toBeGreaterThan(400);
    expect(unknown.status?.conditions?.[0]).toMatchObject({ reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    expect(unknown.spec?.taints?.map((t) => `${t.key}:${t.effect}`)).toEqual(['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute']);

    // The kubelet is back and keeps heartbeating, as a kubelet does.
    const beating = setInterval(() => void heartbeat(), 100);
    try {
      await eventually(async () => ((await core.readNode({ name: 'beating' })).spec?.taints?.length === 0 ? true : undefined));
    } finally {
      clearInterval(beating);
    }
    expect((await core.readNode({ name: 'quiet' })).status?.conditions?.[0].status).toBe('True');
  });

  it('deletes the pods of a deleted node after the quarantine', async () => {
    await core.deleteNode({ name: 'gone' });
    expect((await core.readNamespacedPod({ name: 'agent-gone', namespace: 'kube-system' })).metadata?.name).toBe('agent-gone');
    await eventually(() => core.readNamespacedPod({ name: 'agent-gone', namespace: 'kube-system' }).then(() => undefined, () => true), 3000);
  });
});
