import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, ClusterEntity, NodeEntity, RemovalRunEntity, RemovalRunStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { type RemovalProgressPayload, TOPICS, createInProcessEventBus } from '@ccos/api/util-graphql';
import { DEFAULT_REMOVAL_OPTIONS, type RemovalPhase } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';
import { RemovalLog } from './removal-log';

describe('removal log', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let run: RemovalRunEntity;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    const clusterId = randomUUID();
    const nodeId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: 'c', apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    await dataSource.getRepository(NodeEntity).insert({ id: nodeId, clusterId, hostname: 'w1', status: 'REMOVING' });
    run = await dataSource.getRepository(RemovalRunEntity).save({
      id: randomUUID(),
      nodeId,
      clusterId,
      nodeName: 'w1',
      status: 'RUNNING' as const,
      phase: 'DRAIN' as const,
      options: DEFAULT_REMOVAL_OPTIONS,
      requestedBy: 'operator',
    });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('numbers events in order, stores a burst in few writes and announces each write after it is stored', async () => {
    const bus = createInProcessEventBus();
    const store = new RemovalRunStore(dataSource);
    const log = new RemovalLog(store, bus, pino({ level: 'silent' }));
    const announced: number[] = [];
    const stored: number[] = [];
    const iterator = (bus.subscribe(TOPICS.REMOVAL_PROGRESS, run.nodeId) as AsyncIterable<RemovalProgressPayload>)[Symbol.asyncIterator]();
    const listening = (async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          return;
        }
        announced.push(next.value.seq);
        // Everything up to the announced seq is readable when the announcement arrives.
        stored.push((await store.events.list(run.id)).at(-1)?.seq ?? 0);
        if (next.value.seq === 300) {
          return;
        }
      }
    })();
    const writer = await log.writer(run);
    for (let i = 1; i <= 300; i++) {
      writer.add({ kind: 'POD_DELETED', pod: `shop/web-${i}`, message: message('removal.event.podGone') });
    }
    await writer.flush();
    await listening;
    expect((await store.events.list(run.id)).map((event) => event.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(announced.length).toBeLessThan(10);
    expect(announced.at(-1)).toBe(300);
    announced.forEach((seq, i) => expect(stored[i]).toBeGreaterThanOrEqual(seq));

    // A writer for the same run (after a restart) continues the numbering.
    const resumed = await log.writer(run);
    resumed.add({ kind: 'RESUMED', message: message('removal.event.resumed', { owner: 'api-2', phase: 'DRAIN' }) });
    await resumed.flush();
    expect((await store.events.list(run.id, 300)).map((event) => [event.seq, event.kind, event.phase])).toEqual([[301, 'RESUMED', 'DRAIN']]);
  });

  it('tags each event with the phase the run was in when it was added, though the batch is stored after the run moved on', async () => {
    const store = new RemovalRunStore(dataSource);
    const log = new RemovalLog(store, createInProcessEventBus(), pino({ level: 'silent' }));
    let phase: RemovalPhase = 'DRAIN';
    const writer = await log.writer(run, () => phase);
    const after = writer.lastSeq;
    writer.add({ kind: 'DRAIN_FINISHED', message: message('removal.event.resumed', { owner: 'api-1', phase: 'DRAIN' }) });
    phase = 'STOP_KUBELET';
    writer.add({ kind: 'KUBELET_STOPPED', message: message('removal.event.resumed', { owner: 'api-1', phase: 'DRAIN' }) });
    phase = 'DONE';
    writer.add({ kind: 'FINISHED', message: message('removal.event.resumed', { owner: 'api-1', phase: 'DRAIN' }) });
    await writer.flush();
    expect((await store.events.list(run.id, after)).map((event) => [event.kind, event.phase])).toEqual([
      ['DRAIN_FINISHED', 'DRAIN'],
      ['KUBELET_STOPPED', 'STOP_KUBELET'],
      ['FINISHED', 'DONE'],
    ]);
  });
});
