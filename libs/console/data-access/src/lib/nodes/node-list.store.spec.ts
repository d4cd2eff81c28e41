import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import type { NodeSummary } from './node';
import { FIRST_PAGE_SIZE, NodeListStore } from './node-list.store';

/** A node row as the API sends it; only what the list shows differs between the cases. */
function row(id: string, hostname: string, status = 'JOINED'): NodeSummary {
  return { id, hostname, status, clusterId: 'c-1', ip: '10.0.0.1', origin: 'ADDED', role: 'worker', ready: true, unschedulable: false } as unknown as NodeSummary;
}

const hostnames = (store: NodeListStore) => store.nodes().map((node) => `${node.hostname}:${node.status}`);

function loaded(...nodes: NodeSummary[]) {
  const under = storeUnderTest(NodeListStore);
  under.store.select('c-1');
  under.api.answer('NodeList', { data: { nodes } });
  return under;
}

describe('the node list a cluster page shows', () => {
  it('shows loading until the list arrives, and asks the server afresh rather than the cache', async () => {
    const { store, api } = storeUnderTest(NodeListStore);
    store.select('c-1');
    expect(store.loading()).toBe(true);
    expect(api.pending('NodeList')[0]).toMatchObject({ variables: { clusterId: 'c-1' }, fetchPolicy: 'no-cache' });
    api.answer('NodeList', { data: { nodes: [row('n-1', 'alpha')] } });
    await expect.poll(() => store.loading()).toBe(false);
    expect(hostnames(store)).toEqual(['alpha:JOINED']);
    expect(api.subscription('NodeChanged').variables).toEqual({ clusterId: 'c-1' });
  });

  it('shows a first page at once and then the whole list, and says when the whole list is in', async () => {
    const { store, api } = storeUnderTest(NodeListStore);
    store.select('c-1');
    const many = Array.from({ length: FIRST_PAGE_SIZE + 5 }, (_, index) => row(`n-${index}`, `host-${String(index).padStart(4, '0')}`));
    expect(api.pending('NodeList')[0]).toMatchObject({ variables: { clusterId: 'c-1', first: FIRST_PAGE_SIZE } });
    api.answer('NodeList', { data: { nodes: many.slice(0, FIRST_PAGE_SIZE) } });
    await expect.poll(() => store.nodes().length).toBe(FIRST_PAGE_SIZE);
    expect(store.loading()).toBe(false);
    expect(store.complete()).toBe(false);
    const whole = api.pending('NodeList');
    expect(whole).toHaveLength(1);
    expect(whole[0]?.variables).toEqual({ clusterId: 'c-1' });
    whole[0]?.answer({ data: { nodes: many } });
    await expect.poll(() => store.nodes().length).toBe(FIRST_PAGE_SIZE + 5);
    expect(store.complete()).toBe(true);
  });

  it('asks once when the first page is not full: the list is whole', async () => {
    const { store, api } = loaded(row('n-1', 'alpha'));
    await expect.poll(() => store.complete()).toBe(true);
    expect(api.pending('NodeList')).toHaveLength(0);
    expect(hostnames(store)).toEqual(['alpha:JOINED']);
  });

  it('replaces a changed node where it is, adds a new one in hostname order and drops a deleted one', async () => {
    const { store, api } = loaded(row('n-1', 'alpha'), row('n-3', 'charlie'));
    await expect.poll(() => store.nodes().length).toBe(2);
    const changes = api.subscription('NodeChanged');
    changes.send({ nodeChanged: { nodeId: 'n-1', node: row('n-1', 'alpha', 'REMOVING') } });
    changes.send({ nodeChanged: { nodeId: 'n-2', node: row('n-2', 'bravo', 'ADDING') } });
    expect(hostnames(store)).toEqual(['alpha:REMOVING', 'bravo:ADDING', 'charlie:JOINED']);
    changes.send({ nodeChanged: { nodeId: 'n-3', node: null } });
    expect(hostnames(store)).toEqual(['alpha:REMOVING', 'bravo:ADDING']);
    // A deletion of a node the list never had changes nothing.
    changes.send({ nodeChanged: { nodeId: 'n-9', node: null } });
    expect(hostnames(store)).toEqual(['alpha:REMOVING', 'bravo:ADDING']);
  });

  it('moves a renamed node to its new place in the order', async () => {
    const { store, api } = loaded(row('n-1', 'alpha'), row('n-2', 'bravo'));
    await expect.poll(() => store.nodes().length).toBe(2);
    api.subscription('NodeChanged').send({ nodeChanged: { nodeId: 'n-1', node: row('n-1', 'zulu') } });
    expect(hostnames(store)).toEqual(['bravo:JOINED', 'zulu:JOINED']);
  });

  it('ignores a change that arrives before the list, which already includes it', async () => {
    const { store, api } = storeUnderTest(NodeListStore);
    store.select('c-1');
    api.subscription('NodeChanged').send({ nodeChanged: { nodeId: 'n-2', node: row('n-2', 'bravo') } });
    api.answer('NodeList', { data: { nodes: [row('n-1', 'alpha'), row('n-2', 'bravo')] } });
    await expect.poll(() => hostnames(store)).toEqual(['alpha:JOINED', 'bravo:JOINED']);
  });

  it('never lets an older answer overwrite a newer one', async () => {
    const { store, api } = loaded(row('n-1', 'alpha', 'ADDING'));
    await expect.poll(() => store.nodes().length).toBe(1);
    store.reload();
    store.reload();
    const [older, newer] = api.pending('NodeList');
    newer?.answer({ data: { nodes: [row('n-1', 'alpha', 'READY_TO_INSTALL')] } });
    await expect.poll(() => hostnames(store)).toEqual(['alpha:READY_TO_INSTALL']);
    older?.answer({ data: { nodes: [row('n-1', 'alpha', 'ADDING')] } });
    await Promise.resolve();
    expect(hostnames(store)).toEqual(['alpha:READY_TO_INSTALL']);
  });

  it('reloads the list after the socket came back, for the changes it missed meanwhile', async () => {
    const { store, api, connection } = loaded(row('n-1', 'alpha'));
    await expect.poll(() => store.live()).toBe(true);
    connection.drop();
    expect(store.live()).toBe(false);
    connection.reconnect();
    expect(store.live()).toBe(true);
    api.answer('NodeList', { data: { nodes: [row('n-1', 'alpha'), row('n-2', 'bravo')] } });
    await expect.poll(() => hostnames(store)).toEqual(['alpha:JOINED', 'bravo:JOINED']);
  });

  it('keeps the rows it shows when a reload fails, and says why', async () => {
    const { store, api } = loaded(row('n-1', 'alpha'));
    await expect.poll(() => store.nodes().length).toBe(1);
    store.reload();
    api.answer('NodeList', { error: new CombinedGraphQLErrors({ errors: [{ message: 'cluster unreachable', extensions: { code: 'CLUSTER_UNREACHABLE' } }] }) });
    await expect.poll(() => store.problems().map((problem) => problem.message)).toEqual(['cluster unreachable']);
    expect(hostnames(store)).toEqual(['alpha:JOINED']);
  });

  it('starts over for another cluster and does nothing for the same one', () => {
    const { store, api } = storeUnderTest(NodeListStore);
    store.select('c-1');
    store.select('c-1');
    expect(api.pending('NodeList')).toHaveLength(1);
    store.select('c-2');
    expect(api.subscription('NodeChanged').variables).toEqual({ clusterId: 'c-2' });
    expect(api.subscriptions.filter((subscription) => !subscription.closed())).toHaveLength(1);
    expect(store.loading()).toBe(true);
  });
});
