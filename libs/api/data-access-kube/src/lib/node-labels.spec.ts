import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { setManagedNodeMarks } from './node-labels';

const SEED = `apiVersion: v1
kind: Node
metadata:
  name: w1
  labels: {kubernetes.io/hostname: w1, zone: a, team: by-hand}
spec:
  taints: [{key: node.kubernetes.io/unreachable, effect: NoExecute}, {key: dedicated, value: gpu, effect: NoSchedule}]
`;

describe('setManagedNodeMarks', () => {
  let world: SimWithClient;
  const requests: string[] = [];

  beforeAll(async () => {
    world = await startSimWithClient({ seed: SEED, log: (line) => requests.push(line) });
  });
  afterAll(async () => {
    await world?.stop();
  });

  const read = () => world.client.call('read', (o) => world.client.core.readNode({ name: 'w1' }, o));

  it('changes only the labels and taints it manages, and sends nothing when they are as desired', async () => {
    const marks = {
      previous: { labels: [{ key: 'zone', value: 'a' }], taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
      desired: { labels: [{ key: 'rack', value: 'r7' }], taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
    };
    expect(await setManagedNodeMarks(world.client, 'w1', marks)).toEqual({ node: 'w1', changed: true });
    const node = await read();
    expect(node.metadata?.labels).toEqual({ 'kubernetes.io/hostname': 'w1', team: 'by-hand', rack: 'r7' });
    expect(node.spec?.taints).toEqual([
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
      { key: 'dedicated', value: 'db', effect: 'NoSchedule' },
    ]);
    requests.length = 0;
    expect(await setManagedNodeMarks(world.client, 'w1', { previous: marks.desired, desired: marks.desired })).toEqual({ node: 'w1', changed: false });
    expect(requests.filter((line) => line.startsWith('PATCH'))).toEqual([]);
  });

  it('fails with the API\'s 404 for a Node that is not there', async () => {
    await expect(setManagedNodeMarks(world.client, 'ghost', { previous: { labels: [], taints: [] }, desired: { labels: [], taints: [] } })).rejects.toMatchObject({ statusCode: 404 });
  });
});
