import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import { NodeBatchStore, type NodeBatchView } from './node-batch.store';

const batch = (state: string) => ({ id: 'b-1', state, hosts: [] }) as unknown as NodeBatchView;

function opened() {
  const under = storeUnderTest(NodeBatchStore);
  under.store.select('b-1');
  under.api.answer('Batch', { data: { batch: batch('ADDED') } });
  return under;
}

describe('the batch page', () => {
  it('shows the batch and follows its progress', async () => {
    const { store, api } = opened();
    await expect.poll(() => store.batch()?.state).toBe('ADDED');
    expect(api.subscription('BatchProgress').variables).toEqual({ batchId: 'b-1' });
    expect(store.live()).toBe(true);
  });

  it('asks for the batch again after the socket came back', async () => {
    const { store, api, connection } = opened();
    await expect.poll(() => store.batch()).not.toBeNull();
    connection.drop();
    connection.reconnect();
    api.answer('Batch', { data: { batch: batch('INSTALLING') } });
    await expect.poll(() => store.batch()?.state).toBe('INSTALLING');
  });

  it('is busy with one action at a time and says why an action was refused', async () => {
    const { store, api } = opened();
    const install = store.install(2);
    expect(store.busy()).toBe('install');
    expect(api.pending('InstallBatch')[0]?.variables).toEqual({ batchId: 'b-1', concurrency: 2 });
    api.answer('InstallBatch', { data: { installBatch: batch('INSTALLING') } });
    expect(await install).toMatchObject({ ok: true });
    expect(store.busy()).toBeNull();
    const retry = store.retryFailed();
    api.answer('RetryFailed', { error: new CombinedGraphQLErrors({ errors: [{ message: 'nothing failed', extensions: { code: 'CONFLICT' } }] }) });
    expect(await retry).toMatchObject({ ok: false, problems: [{ code: 'CONFLICT', message: 'nothing failed' }] });
    expect(store.busy()).toBeNull();
  });

  it('does nothing before a batch is chosen', async () => {
    const { store, api } = storeUnderTest(NodeBatchStore);
    expect(await store.cancelRemaining()).toEqual({ ok: false, problems: [] });
    expect(api.requests).toEqual([]);
  });
});
