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

  it('stores an event once per (run, seq)', async () => {
    const owner = run('FAILED');
    await dataSource.getRepository(RemovalRunEntity).insert(owner);
    const events = dataSource.getRepository(RemovalEventEntity);
    const event = { runId: owner.id, seq: 1, kind: 'CORDONED' as const, message: 'node/w1 cordoned', occurredAt: new Date() };
    await events.insert(event);
    await expect(events.insert(event)).rejects.toThrow(/removal_events_run_seq/);
  });
});
