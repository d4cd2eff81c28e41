import { DestroyRef } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { CombinedGraphQLErrors } from '@apollo/client';
import type { Apollo } from 'apollo-angular';
import { describe, expect, it } from 'vitest';
import { NodeChangedDocument } from '@ccos/shared/api-schema';
import { FakeApollo, FakeLiveConnection } from '../../testing';
import type { LiveConnection } from './live-connection';
import { LiveSubscription } from './live-subscription';

function subscription() {
  const api = new FakeApollo();
  const connection = new FakeLiveConnection();
  const live = new LiveSubscription(api as unknown as Apollo, connection as unknown as LiveConnection, NodeChangedDocument, TestBed.inject(DestroyRef));
  const received: unknown[] = [];
  return { api, connection, live, received, handlers: { next: (data: unknown) => received.push(data) } };
}

describe('a subscription a store holds', () => {
  it('is live while subscribed and the socket is up, and hands on each message in order', () => {
    const { api, connection, live, received, handlers } = subscription();
    expect(live.live()).toBe(false);
    live.start({ clusterId: 'c-1' }, handlers);
    expect(live.live()).toBe(true);
    api.subscription('NodeChanged').send({ nodeChanged: { nodeId: 'n-1', node: null } });
    api.subscription('NodeChanged').send({ nodeChanged: { nodeId: 'n-2', node: null } });
    expect(received).toEqual([{ nodeChanged: { nodeId: 'n-1', node: null } }, { nodeChanged: { nodeId: 'n-2', node: null } }]);
    connection.drop();
    expect(live.live()).toBe(false);
  });

  it('keeps one subscription: the same variables change nothing, others replace it', () => {
    const { api, live, handlers } = subscription();
    live.start({ clusterId: 'c-1' }, handlers);
    live.start({ clusterId: 'c-1' }, handlers);
    expect(api.subscriptions).toHaveLength(1);
    live.start({ clusterId: 'c-2' }, handlers);
    expect(api.subscriptions.map((open) => [open.variables, open.closed()])).toEqual([
      [{ clusterId: 'c-1' }, true],
      [{ clusterId: 'c-2' }, false],
    ]);
  });

  it('says why it stopped, and subscribes again on restart with the last variables', () => {
    const { api, live, handlers } = subscription();
    live.start({ clusterId: 'c-1' }, handlers);
    api.subscription('NodeChanged').fail(new CombinedGraphQLErrors({ errors: [{ message: 'not allowed', extensions: { code: 'FORBIDDEN' } }] }));
    expect(live.live()).toBe(false);
    expect(live.problems().map((problem) => problem.code)).toEqual(['FORBIDDEN']);
    live.restart();
    expect(live.problems()).toEqual([]);
    expect(api.subscription('NodeChanged').variables).toEqual({ clusterId: 'c-1' });
    expect(live.live()).toBe(true);
  });

  it('ends with the store', () => {
    const { api, live, handlers } = subscription();
    live.start({ clusterId: 'c-1' }, handlers);
    const open = api.subscription('NodeChanged');
    TestBed.resetTestingModule();
    expect(open.closed()).toBe(true);
    expect(live.live()).toBe(false);
  });
});
