import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../testing';
import { openDatabase, redactUrl } from './data-source';
import { startEmbeddedDatabase } from './embedded-database';
import { ClusterEntity } from './entities/cluster.entity';
import { InstallRunEntity } from './entities/install-run.entity';
import { NodeEntity } from './entities/node.entity';
import { StepEventEntity } from './entities/step-event.entity';
import { MIGRATIONS } from './migrations';

async function roundTrip(dataSource: DataSource): Promise<void> {
  const cluster = dataSource.getRepository(ClusterEntity).create({
    id: randomUUID(), name: 'prod', apiServerUrl: 'https://api.example.com:6443', vip: '198.18.0.2', credentialsSealed: 'sealed', credentialKind: 'TOKEN',
  });
  await dataSource.getRepository(ClusterEntity).save(cluster);
  const node = await dataSource.getRepository(NodeEntity).save({
    id: randomUUID(), clusterId: cluster.id, hostname: 'w1', ip: '198.18.0.11', status: 'ADDING' as const, labels: [{ key: 'zone', value: 'a' }],
  });
  const run = await dataSource.getRepository(InstallRunEntity).save({ id: randomUUID(), nodeId: node.id, status: 'RUNNING' as const, requestedBy: 'admin' });
  const event = { runId: run.id, seq: 1, step: 'PREFLIGHT' as const, status: 'STARTED' as const, occurredAt: new Date() };
  await dataSource.getRepository(StepEventEntity).insert(event);
  // (run, seq) is stored once: a re-sent event is refused by the unique constraint.
  await expect(dataSource.getRepository(StepEventEntity).insert(event)).rejects.toThrow(/step_events_run_seq/);
  // Hostnames are unique per cluster among nodes that are not removed.
  await expect(
    dataSource.getRepository(NodeEntity).insert({ id: randomUUID(), clusterId: cluster.id, hostname: 'w1', ip: '198.18.0.12', status: 'ADDING' }),
  ).rejects.toThrow(/nodes_cluster_hostname_active/);
  await dataSource.getRepository(NodeEntity).update(node.id, { status: 'REMOVED' });
  await dataSource.getRepository(NodeEntity).insert({ id: randomUUID(), clusterId: cluster.id, hostname: 'w1', ip: '198.18.0.11', status: 'ADDING' });

  const loaded = await dataSource.getRepository(NodeEntity).findOneByOrFail({ id: node.id });
  expect(loaded).toMatchObject({ hostname: 'w1', labels: [{ key: 'zone', value: 'a' }], status: 'REMOVED', origin: 'ADDED', sshPort: 22 });
  const applied = await dataSource.query('SELECT name FROM schema_migrations ORDER BY id');
  expect(applied.map((row: { name: string }) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
}

describe('database', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup();
    }
  });

  it('migrates a fresh real Postgres database and round-trips every table', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const dataSource = await openDatabase({ url: database.url });
    cleanups.push(() => dataSource.destroy());
    await roundTrip(dataSource);
    // Running the migrations again is a no-op.
    expect(await dataSource.runMigrations()).toEqual([]);
  });

  it('runs the same migrations on the embedded database and keeps data across a restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ccos-embedded-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    let embedded = await startEmbeddedDatabase(dataDir);
    let dataSource = await openDatabase({ url: embedded.url, maxConnections: 1 });
    await roundTrip(dataSource);
    await dataSource.destroy();
    await embedded.stop();

    embedded = await startEmbeddedDatabase(dataDir);
    dataSource = await openDatabase({ url: embedded.url, maxConnections: 1 });
    expect(await dataSource.getRepository(ClusterEntity).count()).toBe(1);
    await dataSource.destroy();
    await embedded.stop();
  });

  it('never logs a database password', () => {
    expect(redactUrl('postgres://app:s3cret@db:5432/ccos')).toBe('postgres://app:***@db:5432/ccos');
  });
});
