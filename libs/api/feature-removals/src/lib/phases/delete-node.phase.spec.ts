import { afterEach, describe, expect, it } from 'vitest';
import { type SimWithClient, startSimWithClient } from '@ccos/api/data-access-kube/testing';
import { phaseHarness, runningRun } from '../../testing/phase-harness';
import { DeleteNodePhase } from './delete-node.phase';

const SEED = `apiVersion: v1
kind: Node
metadata: {name: w1}
status: {conditions: [{type: Ready, status: "True"}]}`;

describe('DELETE_NODE', () => {
  let world: SimWithClient | undefined;
  afterEach(async () => {
    await world?.stop();
    world = undefined;
  });

  /** The phase against kube-sim, for a run that started with the Node of `uid` (its current one when undefined). */
  const deleteIn = async (uid?: string) => {
    world = await startSimWithClient({ seed: SEED });
    const { client } = world;
    const current = await client.call('read', (o) => client.core.readNode({ name: 'w1' }, o));
    const h = phaseHarness(runningRun({ phase: 'DELETE_NODE', nodeUid: uid ?? current.metadata?.uid ?? null }));
    const phase = new DeleteNodePhase({ clusters: { watch: async () => ({ client, nodes: () => [], podsOnNode: () => null }) } });
    const nodes = async () => (await client.call('list', (o) => client.core.listNode({}, o))).items.map((node) => node.metadata?.name);
    return { h, phase, nodes };
  };

  it('deletes the Node the run started with, and counts one already gone as deleted', async () => {
    const { h, phase, nodes } = await deleteIn();
    expect(await phase.run(h.ctx)).toEqual({ outcome: 'NEXT' });
    expect(await nodes()).toEqual([]);
    expect(await phase.run(h.ctx)).toEqual({ outcome: 'NEXT' });
    expect(h.events).toMatchObject([
      { kind: 'NODE_DELETED', message: { code: 'removal.event.nodeDeleted', params: { node: 'w1' } } },
      { kind: 'NODE_DELETED', message: { code: 'removal.event.nodeAlreadyGone', params: { node: 'w1' } } },
    ]);
  });

  it('leaves a Node registered again since (another uid) and ends the run', async () => {
    const { h, phase, nodes } = await deleteIn('00000000-0000-4000-8000-000000000000');
    const result = await phase.run(h.ctx);
    expect(result).toMatchObject({ outcome: 'FAILED', reason: expect.objectContaining({ code: 'removal.nodeRegisteredAgain', message: expect.stringContaining('node w1 was registered again (another UID) and was not deleted') }) });
    expect(h.events).toEqual([{ kind: 'NODE_NOT_DELETED', message: result.outcome === 'FAILED' ? result.reason : '' }]);
    expect(await nodes()).toEqual(['w1']);
  });

  it('ends the run when the cluster cannot be reached', async () => {
    const h = phaseHarness(runningRun({ phase: 'DELETE_NODE' }));
    const phase = new DeleteNodePhase({ clusters: { watch: async () => Promise.reject(new Error('connect ECONNREFUSED 198.18.0.2:6443')) } });
    expect(await phase.run(h.ctx)).toMatchObject({ outcome: 'FAILED', reason: { code: 'removal.nodeNotDeleted', params: { error: 'connect ECONNREFUSED 198.18.0.2:6443' } } });
    // The event is coded too (it was the bare error text): a Chinese page shows it in Chinese.
    expect(h.events).toMatchObject([
      { kind: 'NODE_NOT_DELETED', message: { code: 'removal.nodeNotDeleted', params: { error: 'connect ECONNREFUSED 198.18.0.2:6443' }, message: 'the Node could not be deleted: connect ECONNREFUSED 198.18.0.2:6443; remove the node again' } },
    ]);
  });
});
