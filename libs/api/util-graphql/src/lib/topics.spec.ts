import { describe, expect, it } from 'vitest';
import { type EventBus, createInProcessEventBus } from './pubsub';
import { type BatchProgressPayload, TOPICS, followNodeChanges, nodeChangePublisher } from './topics';

describe('followNodeChanges', () => {
  it('hears every change of its own cluster in order, none of another, and nothing after it is closed', async () => {
    const bus = createInProcessEventBus();
    const publish = nodeChangePublisher(bus);
    const heard: string[] = [];
    let third!: () => void;
    const gotThird = new Promise<void>((resolve) => (third = resolve));
    const iterator = followNodeChanges(bus, 'c1', async (change) => {
      heard.push(change.nodeId);
      if (heard.length === 3) {
        third();
      }
    }, { stopped: () => false, failed: () => undefined });
    publish({ id: 'n1', clusterId: 'c1', status: 'ADDING' });
    publish({ id: 'x1', clusterId: 'c2', status: 'ADDING' });
    publish({ id: 'n2', clusterId: 'c1', status: 'JOINED' });
    publish({ id: 'n3', clusterId: 'c1', status: 'JOINED' });
    await gotThird;
    await iterator.return?.();
    publish({ id: 'n4', clusterId: 'c1', status: 'JOINED' });
    // Nothing to await for a change that must not arrive: let the publish's delivery run first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(heard).toEqual(['n1', 'n2', 'n3']);
  });

  it('tells why it stopped when the bus breaks off', async () => {
    const broken = new Error('connection lost');
    const bus: Pick<EventBus, 'subscribe'> = {
      subscribe: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(broken) }) }) as never,
    };
    const failure = new Promise<unknown>((resolve) => followNodeChanges(bus, 'c1', async () => undefined, { stopped: () => false, failed: resolve }));
    expect(await failure).toBe(broken);
  });
});

describe('nodeChangePublisher', () => {
  it("tells a host's batch of each of its changes (an added host's check included), and no batch of a host outside one", async () => {
    const bus = createInProcessEventBus();
    const publish = nodeChangePublisher(bus, () => new Date('2026-12-04T12:00:00Z'));
    const iterator = (bus.subscribe(TOPICS.BATCH_PROGRESS, 'b1') as AsyncIterable<BatchProgressPayload>)[Symbol.asyncIterator]();
    const first = iterator.next();
    publish({ id: 'loose', clusterId: 'c1', status: 'READY_TO_INSTALL', batchId: null });
    publish({ id: 'n1', clusterId: 'c1', status: 'READY_TO_INSTALL', batchId: 'b1' });
    expect((await first).value).toEqual({ batchId: 'b1', at: '2026-12-04T12:00:00.000Z' });
    const second = iterator.next();
    publish({ id: 'n2', clusterId: 'c1', status: 'UNREACHABLE', batchId: 'b2' });
    publish({ id: 'n1', clusterId: 'c1', status: 'INSTALLING', batchId: 'b1' });
    expect((await second).value).toEqual({ batchId: 'b1', at: '2026-12-04T12:00:00.000Z' });
    await iterator.return?.();
  });
});
