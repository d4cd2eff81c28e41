import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { cordonNode, uncordonNode } from './cordon';
import { KubeApiError } from './kube-client';

describe('cordon / uncordon', () => {
  let world: SimWithClient;
  const requests: string[] = [];

  beforeAll(async () => {
    world = await startSimWithClient({ seed: 'apiVersion: v1\nkind: Node\nmetadata: {name: w1}\n', log: (line) => requests.push(line) });
  });

  afterAll(async () => {
    await world?.stop();
  });

  const unschedulable = async (): Promise<boolean | undefined> =>
    (await world.client.call('read', (o) => world.client.core.readNode({ name: 'w1' }, o))).spec?.unschedulable;

  it('patches spec.unschedulable with a strategic merge patch, only when it changes', async () => {
    requests.length = 0;
    expect(await cordonNode(world.client, 'w1')).toEqual({ node: 'w1', unschedulable: true, changed: true });
    expect(await unschedulable()).toBe(true);
    expect(await cordonNode(world.client, 'w1')).toEqual({ node: 'w1', unschedulable: true, changed: false });
    expect(await uncordonNode(world.client, 'w1')).toEqual({ node: 'w1', unschedulable: false, changed: true });
    // Uncordon removes the field, as kubectl's patch ({"unschedulable":null}) does.
    expect(await unschedulable()).toBeUndefined();
    expect(await uncordonNode(world.client, 'w1')).toMatchObject({ changed: false });
    expect(requests.filter((line) => line.startsWith('PATCH /api/v1/nodes/w1'))).toHaveLength(2);
  });

  it('fails with a 404 KubeApiError for a missing node', async () => {
    await expect(cordonNode(world.client, 'ghost')).rejects.toMatchObject({ statusCode: 404, message: 'read node ghost: nodes "ghost" not found (404 NotFound)' });
    await expect(cordonNode(world.client, 'ghost')).rejects.toBeInstanceOf(KubeApiError);
  });
});
