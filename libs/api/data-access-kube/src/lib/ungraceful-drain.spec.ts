import { afterEach, describe, expect, it } from 'vitest';
import { type SeedOwner, seedBudget, seedController, seedNode, seedOf, seedPod } from '../testing/drain-seed';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import type { DrainEvent } from './drain';
import { drainDeadNode } from './ungraceful-drain';

const RS_UID = 'c1f0c7e2-0000-4000-8000-0000000000a1';
const DS_UID = 'c1f0c7e2-0000-4000-8000-0000000000d5';
const DB: SeedOwner = { kind: 'ReplicaSet', name: 'db', uid: RS_UID };
const AGENT: SeedOwner = { kind: 'DaemonSet', name: 'agent', uid: DS_UID };

/** w1 is dead (Ready Unknown) and holds a pod under a PDB that allows no disruption, a long grace period, a DaemonSet pod and an unmanaged pod. */
const SEED = seedOf(
  seedNode('w1', { ready: 'Unknown' }),
  seedController(DB, 'shop', 'db'),
  seedController(AGENT, 'kube-system', 'agent'),
  seedPod({ name: 'db-1', namespace: 'shop', node: 'w1', app: 'db', owner: DB, graceSeconds: 3600 }),
  seedPod({ name: 'agent-w1', namespace: 'kube-system', node: 'w1', app: 'agent', owner: AGENT, state: 'Running' }),
  seedPod({ name: 'handmade', namespace: 'default', node: 'w1', graceSeconds: 3600, state: 'Running' }),
  seedBudget('db-budget', 'shop', 'db', 'minAvailable: 1'),
);

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
