import { afterEach, describe, expect, it } from 'vitest';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import type { DrainEvent } from './drain';
import { drainDeadNode } from './ungraceful-drain';

const RS_UID = 'c1f0c7e2-0000-4000-8000-0000000000a1';
const DS_UID = 'c1f0c7e2-0000-4000-8000-0000000000d5';
const owner = (kind: string, name: string, uid: string) => `[{apiVersion: apps/v1, kind: ${kind}, name: ${name}, uid: ${uid}, controller: true}]`;

/** w1 is dead (Ready Unknown) and holds a pod under a PDB that allows no disruption, a long grace period, a DaemonSet pod and an unmanaged pod. */
const SEED = `
apiVersion: v1
kind: Node
metadata: {name: w1}
status: {conditions: [{type: Ready, status: "Unknown"}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: db, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system, uid: ${DS_UID}}
spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: agent}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: db-1, namespace: shop, labels: {app: db}, ownerReferences: ${owner('ReplicaSet', 'db', RS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 3600, containers: [{name: c, image: db}]}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: agent-w1, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'agent', DS_UID)}}
spec: {nodeName: w1, containers: [{name: c, image: agent}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: handmade, namespace: default}
spec: {nodeName: w1, terminationGracePeriodSeconds: 3600, containers: [{name: c, image: busybox}]}
status: {phase: Running}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db-budget, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}
`;

describe('drainDeadNode', () => {
  let world: SimWithClient;
  afterEach(async () => {
    await world?.stop();
  });

  const podsOn = async (node: string) =>
    (await world.client.call('list', (o) => world.client.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` }, o))).items.map((pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`).sort();

  it('refuses like kubectl drain when the options do not allow a class of pods, deleting nothing', async () => {
    world = await startSimWithClient({ seed: SEED });
    const result = await drainDeadNode(world.client, 'w1', { ignoreDaemonSets: true });
    expect(result).toMatchObject({ ok: false, failure: 'REFUSED', blocking: [{ pod: 'default/handmade' }] });
    expect(await podsOn('w1')).toEqual(['default/handmade', 'kube-system/agent-w1', 'shop/db-1']);
  });

  it('deletes the pods a drain would evict at once, past the budget and the grace period, and keeps DaemonSet pods', async () => {
    world = await startSimWithClient({ seed: SEED });
    const events: DrainEvent[] = [];
    const result = await drainDeadNode(world.client, 'w1', { ignoreDaemonSets: true, force: true }, (event) => events.push(event));
    expect(result).toMatchObject({ ok: true, evicted: expect.arrayContaining(['shop/db-1', 'default/handmade']), skipped: [{ pod: 'kube-system/agent-w1', reason: 'ignoring DaemonSet-managed Pods' }] });
    expect(await podsOn('w1')).toEqual(['kube-system/agent-w1']);
    expect(events.map((event) => event.type)).toEqual(['cordoned', 'pod-skipped', 'pod-deleted', 'pod-deleted', 'done']);
    const node = await world.client.call('read', (o) => world.client.core.readNode({ name: 'w1' }, o));
    expect(node.spec?.unschedulable).toBe(true);
  });

  it('reports a Node that does not exist', async () => {
    world = await startSimWithClient({ seed: SEED });
    expect(await drainDeadNode(world.client, 'nope', { force: true })).toMatchObject({ ok: false, failure: 'NODE_NOT_FOUND' });
  });
});
