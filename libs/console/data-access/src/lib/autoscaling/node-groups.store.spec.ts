import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { storeUnderTest } from '../../testing';
import { type NodeGroupView, NodeGroupsStore } from './node-groups.store';

const group = (name: string, spares: number) => ({ id: `g-${name}`, name, hosts: Array.from({ length: spares }, (_, index) => ({ nodeId: `n-${index}`, state: 'SPARE' })), activity: [] }) as unknown as NodeGroupView;

describe('the Pools page: node groups, live', () => {
  it('shows nothing loaded until the first message, then each message’s groups as they are', () => {
    const { store, api } = storeUnderTest(NodeGroupsStore);
    store.select('c-1');
    expect(store.loaded()).toBe(false);
    const changes = api.subscription('NodeGroupsChanged');
    expect(changes.variables).toEqual({ clusterId: 'c-1' });
    changes.send({ nodeGroupsChanged: [group('pool-a', 2)] });
    expect(store.loaded()).toBe(true);
    expect(store.groups().map((shown) => `${shown.name}:${shown.hosts.length}`)).toEqual(['pool-a:2']);
    changes.send({ nodeGroupsChanged: [group('pool-a', 1), group('pool-b', 0)] });
    expect(store.groups().map((shown) => `${shown.name}:${shown.hosts.length}`)).toEqual(['pool-a:1', 'pool-b:0']);
  });

  it('subscribes again after the socket came back, for the groups as they are now', () => {
    const { store, api, connection } = storeUnderTest(NodeGroupsStore);
    store.select('c-1');
    const first = api.subscription('NodeGroupsChanged');
    connection.drop();
    expect(store.live()).toBe(false);
    connection.reconnect();
    expect(first.closed()).toBe(true);
    expect(api.subscription('NodeGroupsChanged')).not.toBe(first);
    expect(store.live()).toBe(true);
  });

  it('says why updates stopped, and Retry subscribes again', () => {
    const { store, api } = storeUnderTest(NodeGroupsStore);
    store.select('c-1');
    api.subscription('NodeGroupsChanged').fail(new CombinedGraphQLErrors({ errors: [{ message: 'not allowed', extensions: { code: 'FORBIDDEN' } }] }));
    expect(store.live()).toBe(false);
    expect(store.problems().map((problem) => problem.code)).toEqual(['FORBIDDEN']);
    store.retry();
    expect(store.problems()).toEqual([]);
    api.subscription('NodeGroupsChanged').send({ nodeGroupsChanged: [] });
    expect(store.loaded()).toBe(true);
    expect(store.live()).toBe(true);
  });

  it('forgets the groups of the previous cluster', () => {
    const { store, api } = storeUnderTest(NodeGroupsStore);
    store.select('c-1');
    api.subscription('NodeGroupsChanged').send({ nodeGroupsChanged: [group('pool-a', 2)] });
    store.select('c-2');
    expect(store.groups()).toEqual([]);
    expect(store.loaded()).toBe(false);
    expect(api.subscription('NodeGroupsChanged').variables).toEqual({ clusterId: 'c-2' });
  });
});
