import { describe, expect, it } from 'vitest';
import { removalEvent, removalRun, storeUnderTest } from '../../testing';
import type { RemovalEventView, RemovalRunView } from './removal';
import { RemovalProgressStore } from './removal-progress.store';

function listed(run: RemovalRunView, events: readonly RemovalEventView[]) {
  return { ...run, events };
}

function opened(runs: ReturnType<typeof listed>[] = []) {
  const under = storeUnderTest(RemovalProgressStore);
  under.store.select('n-1');
  under.api.answer('RemovalRuns', { data: { removalRuns: runs } });
  return under;
}

const seqs = (events: readonly RemovalEventView[]) => events.map((event) => event.seq);

describe('a node page’s removals: the runs and the latest one live', () => {
  it('lists the runs with their events, and subscribes to the node’s removal progress', async () => {
    const { store, api } = opened([listed(removalRun({ id: 'removal-0', status: 'FAILED' }), [removalEvent(1, 'STARTED'), removalEvent(2, 'DRAIN_FAILED')])]);
    await expect.poll(() => store.runs().length).toBe(1);
    expect(api.subscription('RemovalProgress').variables).toEqual({ nodeId: 'n-1' });
    expect(seqs(store.eventsOf('removal-0'))).toEqual([1, 2]);
    expect(store.live()).toBe(true);
  });

  it('merges live events into the listed log by seq: replays dropped, a late one in its place', async () => {
    const run = removalRun({ id: 'removal-1' });
    const { store, api } = opened([listed(run, [removalEvent(1, 'STARTED'), removalEvent(2, 'CORDONED')])]);
    await expect.poll(() => store.runs().length).toBe(1);
    const progress = api.subscription('RemovalProgress');
    progress.send({ removalProgress: { nodeId: 'n-1', run, events: [removalEvent(4, 'POD_EVICTED')] } });
    // After a reconnect the first message repeats every event so far, and one was missed meanwhile.
    progress.send({ removalProgress: { nodeId: 'n-1', run, events: [removalEvent(1, 'STARTED'), removalEvent(2, 'CORDONED'), removalEvent(3, 'POD_EVICTED'), removalEvent(4, 'POD_EVICTED')] } });
    expect(seqs(store.eventsOf('removal-1'))).toEqual([1, 2, 3, 4]);
  });

  it('shows a removal started since the page loaded as the current one, the earlier ones newest first, once listed not twice', async () => {
    const { store, api } = opened([listed(removalRun({ id: 'removal-0', status: 'FAILED' }), []), listed(removalRun({ id: 'removal-1', status: 'CANCELLED' }), [])]);
    await expect.poll(() => store.runs().length).toBe(2);
    const run = removalRun({ id: 'removal-2' });
    api.subscription('RemovalProgress').send({ removalProgress: { nodeId: 'n-1', run, events: [removalEvent(1, 'STARTED')] } });
    expect(store.currentRun()?.id).toBe('removal-2');
    expect(store.previousRuns().map((earlier) => earlier.id)).toEqual(['removal-1', 'removal-0']);
    expect(seqs(store.eventsOf('removal-2'))).toEqual([1]);
    store.reload();
    api.answer('RemovalRuns', { data: { removalRuns: [listed(removalRun({ id: 'removal-0', status: 'FAILED' }), []), listed(removalRun({ id: 'removal-1', status: 'CANCELLED' }), []), listed(run, [removalEvent(1, 'STARTED'), removalEvent(2, 'CORDONED')])] } });
    await expect.poll(() => seqs(store.eventsOf('removal-2'))).toEqual([1, 2]);
    expect(store.runs().map((each) => each.id)).toEqual(['removal-0', 'removal-1', 'removal-2']);
  });

  it('ignores progress of another node', async () => {
    const { store, api } = opened();
    await expect.poll(() => api.pending('RemovalRuns')).toHaveLength(0);
    api.subscription('RemovalProgress').send({ removalProgress: { nodeId: 'n-2', run: removalRun({ id: 'removal-9', nodeId: 'n-2' }), events: [removalEvent(1, 'STARTED')] } });
    expect(store.runs()).toEqual([]);
    expect(store.eventsOf('removal-9')).toEqual([]);
  });
});
