import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REMOVAL_OPTIONS } from '@ccos/shared/domain';
import { createTestDatabase, type TestDatabase } from '../testing';
import { openDatabase } from './data-source';
import { ClusterEntity } from './entities/cluster.entity';
import { NodeEntity } from './entities/node.entity';
import { RemovalEventEntity } from './entities/removal-event.entity';
import { RemovalRunEntity } from './entities/removal-run.entity';
import { RemovalRunStore } from './removal-run.store';

describe('removal runs', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let clusterId: string;
  let nodeId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    clusterId = randomUUID();
    nodeId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: 'c', apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    await dataSource.getRepository(NodeEntity).insert({ id: nodeId, clusterId, hostname: 'w1', status: 'JOINED' });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const run = (status: RemovalRunEntity['status']) => ({
    id: randomUUID(),
    nodeId,
    clusterId,
    nodeName: 'w1',
    status,
    phase: 'DRAIN' as const,
    options: DEFAULT_REMOVAL_OPTIONS,
    requestedBy: 'operator',
  });

  it('allows one RUNNING run per node, any number of finished ones', async () => {
    const runs = dataSource.getRepository(RemovalRunEntity);
    await runs.insert(run('FAILED'));
    await runs.insert(run('CANCELLED'));
    const first = run('RUNNING');
    await runs.insert(first);
    await expect(runs.insert(run('RUNNING'))).rejects.toThrow(/removal_runs_one_running/);
    await runs.update(first.id, { status: 'SUCCEEDED' });
    await runs.insert(run('RUNNING'));
    const stored = await runs.findOneByOrFail({ id: first.id });
    expect(stored.options).toEqual(DEFAULT_REMOVAL_OPTIONS);
    expect(stored.blocking).toEqual([]);
  });

  it('has a RUNNING run changed only by the executor that took it last, and taken only from the executor its taker read', async () => {
    const store = new RemovalRunStore(dataSource);
    const otherNode = randomUUID();
    await dataSource.getRepository(NodeEntity).insert({ id: otherNode, clusterId, hostname: 'w2', status: 'JOINED' });
    const fields = { nodeId: otherNode, clusterId, nodeName: 'w2', nodeUid: null, phase: 'DRAIN' as const, options: DEFAULT_REMOVAL_OPTIONS, requestedBy: 'operator' };
    const started = await store.insertRunning({ id: randomUUID(), ...fields });
    expect(started).toMatchObject({ status: 'RUNNING', owner: null, cancelRequested: false, blocking: [] });
    expect(await store.insertRunning({ id: randomUUID(), ...fields })).toBeNull();
    const id = started?.id ?? '';
    expect(await store.running()).toContainEqual({ id, nodeId: otherNode });

    // Its first job takes it; a job that read it before that finds it taken.
    expect(await store.take(id, 'api-1#1', null)).toMatchObject({ owner: 'api-1#1' });
    expect(await store.take(id, 'api-2#2', null)).toBeNull();
    expect(await store.updateOwned(id, 'api-2#2', { phase: 'STOP_KUBELET' })).toBe(false);
    expect(await store.heartbeat(id, 'api-2#2')).toBeNull();

    await store.requestCancel(id, { reason: 'cancelled by operator', reasonCoded: null });
    expect(await store.heartbeat(id, 'api-1#1')).toEqual({ cancelRequested: true, reason: 'cancelled by operator', reasonCoded: null, skipHost: null, forceDrain: null });
    // A request to go on without the host is taken once, and the executor's heartbeat reads it.
    const skip = { actor: 'operator', reason: 'host is gone', at: '2026-12-05T10:00:00.000Z' };
    expect(await store.requestDecision(id, 'skipHost', skip)).toBe(true);
    expect(await store.requestDecision(id, 'skipHost', { ...skip, actor: 'admin' })).toBe(false);
    expect((await store.heartbeat(id, 'api-1#1'))?.skipHost).toEqual(skip);
    // Going past the budgets is for a run that drains.
    expect(await store.requestDecision(id, 'forceDrain', { ...skip, actor: 'admin' })).toBe(true);
    expect(await store.requestDecision(id, 'forceDrain', { ...skip, actor: 'admin' })).toBe(false);
    expect((await store.heartbeat(id, 'api-1#1'))?.forceDrain).toEqual({ ...skip, actor: 'admin' });
    expect(await store.updateOwned(id, 'api-1#1', { blocker: { code: 'removal.blocker.hostUnreachable', params: { host: '198.18.0.9', since: 1, error: 'refused' } }, blockerSince: new Date(1000) })).toBe(true);
    expect(await store.get(id)).toMatchObject({ blocker: { code: 'removal.blocker.hostUnreachable' }, blockerSince: new Date(1000), skipHost: skip });
    expect(await store.updateOwned(id, 'api-1#1', { phase: 'STOP_KUBELET' })).toBe(true);
    expect(await store.runningByPhase()).toContainEqual({ phase: 'STOP_KUBELET', count: 1 });

    // Its job given to another worker: the earlier executor can no longer write.
    expect(await store.take(id, 'api-2#2', 'api-1#1')).toMatchObject({ owner: 'api-2#2', phase: 'STOP_KUBELET' });
    expect(await store.isOwnedBy(id, 'api-1#1')).toBe(false);
    expect(await store.updateOwned(id, 'api-1#1', { phase: 'DELETE_NODE' })).toBe(false);
    expect(await store.updateOwned(id, 'api-2#2', { status: 'CANCELLED', finishedAt: new Date() })).toBe(true);
    expect(await store.take(id, 'api-3#3', 'api-2#2')).toBeNull();
    expect((await store.running()).map((run) => run.id)).not.toContain(id);
    expect(await store.runningOf(otherNode)).toBeNull();
    expect((await store.latestOf(otherNode))?.status).toBe('CANCELLED');
  });

  it('numbers events after the last one and reads them after a sequence number', async () => {
    const store = new RemovalRunStore(dataSource);
    const owner = run('FAILED');
    await dataSource.getRepository(RemovalRunEntity).insert(owner);
    const event = (text: string) => ({ kind: 'CORDONED' as const, phase: 'DRAIN' as const, pod: null, pdb: null, message: text, messageCoded: null, detail: null, occurredAt: new Date() });
    expect(await store.events.lastSeq(owner.id)).toBe(0);
    expect(await store.events.appendNext(owner.id, [event('first'), event('second')])).toEqual([1, 2]);
    expect(await store.events.appendNext(owner.id, [event('third')])).toEqual([3]);
    expect(await store.events.lastSeq(owner.id)).toBe(3);
    expect((await store.events.list(owner.id, 1)).map((stored) => [stored.seq, stored.message])).toEqual([[2, 'second'], [3, 'third']]);
  });

  it('stores an event once per (run, seq)', async () => {
    const owner = run('FAILED');
    await dataSource.getRepository(RemovalRunEntity).insert(owner);
    const events = dataSource.getRepository(RemovalEventEntity);
    const event = { runId: owner.id, seq: 1, kind: 'CORDONED' as const, phase: 'DRAIN' as const, message: 'node/w1 cordoned', occurredAt: new Date() };
    await events.insert(event);
    await expect(events.insert(event)).rejects.toThrow(/removal_events_run_seq/);
  });
});
