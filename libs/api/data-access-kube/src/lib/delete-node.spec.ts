import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { deleteNode } from './delete-node';

describe('deleteNode', () => {
  let world: SimWithClient;

  beforeAll(async () => {
    world = await startSimWithClient({ seed: 'apiVersion: v1\nkind: Node\nmetadata: {name: w1}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: w2}\n' });
  });

  afterAll(async () => {
    await world?.stop();
  });

  const uidOf = async (name: string): Promise<string> => (await world.client.call('read', (o) => world.client.core.readNode({ name }, o))).metadata?.uid ?? '';

  it('deletes the Node, and reports a Node that was already gone', async () => {
    expect(await deleteNode(world.client, 'w1', { uid: await uidOf('w1') })).toEqual({ ok: true, existed: true });
    expect(await deleteNode(world.client, 'w1')).toEqual({ ok: true, existed: false });
  });

  it('leaves a Node registered again under the same name (another UID) alone', async () => {
    const old = await uidOf('w2');
    await deleteNode(world.client, 'w2');
    await world.client.call('create', (o) => world.client.core.createNode({ body: { metadata: { name: 'w2' } } }, o));
    const result = await deleteNode(world.client, 'w2', { uid: old });
    expect(result).toMatchObject({ ok: false, reason: { code: 'removal.nodeRegisteredAgain', message: expect.stringContaining('registered again') } });
    expect(await uidOf('w2')).not.toBe(old);
  });
});
