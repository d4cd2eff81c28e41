import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, AgentTokens, ClusterEntity, NodeStore, RemovalRunEntity, RemovalRunStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { SshPool } from '@ccos/api/data-access-ssh';
import { createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { DEFAULT_REMOVAL_OPTIONS } from '@ccos/shared/domain';
import { createRemovalFeature } from './removal-feature';
import type { RemovalRunner } from './removal-runner';

/** Which RUNNING runs a replica takes over; the cluster is unreachable, so an adopted run ends DRAIN_FAILED. */
describe('removal runner: taking runs over', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let store: NodeStore;
  let clusterId: string;
  const ssh = new SshPool({ maxSessions: 1 });
  const logger = pino({ level: 'silent' });

  const runner = (identity: string): RemovalRunner =>
    createRemovalFeature({
      runs: new RemovalRunStore(dataSource),
      nodes: store,
      tokens: new AgentTokens(dataSource),
      clusters: { watch: async () => Promise.reject(new Error('no API server in this test')), read: async () => Promise.reject(new Error('no API server in this test')) },
      csrs: { pendingCsrNamesFor: async () => [], deny: async () => undefined },
      hosts: () => null,
      ssh,
      events: createInProcessEventBus(),
      logger,
      runner: { identity, staleAfterMs: 15_000 },
    }).runner;

  /** A node being removed by a run of `owner` whose last heartbeat was `ageSeconds` ago. */
  const runOf = async (owner: string, ageSeconds: number): Promise<string> => {
    const node = await store.create({ clusterId, hostname: `w-${randomUUID().slice(0, 8)}`, status: 'REMOVING', everJoined: true });
    const id = randomUUID();
    await dataSource.getRepository(RemovalRunEntity).insert({
      id,
      nodeId: node.id,
      clusterId,
      nodeName: node.hostname,
      status: 'RUNNING',
      phase: 'DRAIN',
      options: DEFAULT_REMOVAL_OPTIONS,
      requestedBy: 'operator',
      owner,
      heartbeatAt: new Date(Date.now() - ageSeconds * 1000),
    });
    return id;
  };
  /** The run's row once the runner that executes it has finished it (awaited, not polled). */
  const ended = async (owner: RemovalRunner, id: string) => {
    await owner.settled(id);
    const run = await dataSource.getRepository(RemovalRunEntity).findOneByOrFail({ id });
    expect(run.status, `run ${id} still running`).not.toBe('RUNNING');
    return run;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    store = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
    clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: 'c', apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
  });
  afterAll(async () => {
    await ssh.close();
    await dataSource?.destroy();
    await database?.drop();
  });

  it('at start takes its own host’s runs and stale ones, never a live run of another replica; later sweeps take stale ones only', async () => {
    const restarted = await runOf('api-0#100', 1);
    const stale = await runOf('api-1#200', 60);
    const live = await runOf('api-1#200', 1);
    const first = runner('api-0#300');
    expect(await first.adoptOrphans(true)).toBe(2);
    for (const id of [restarted, stale]) {
      const run = await ended(first, id);
      expect(run).toMatchObject({ owner: 'api-0#300', status: 'FAILED' });
      expect(run.reason).toContain('cannot reach the cluster');
      expect((await store.get(run.nodeId)).status).toBe('DRAIN_FAILED');
    }
    expect(await dataSource.getRepository(RemovalRunEntity).findOneByOrFail({ id: live })).toMatchObject({ owner: 'api-1#200', status: 'RUNNING' });
    await first.stop();

    const sameHostLater = await runOf('api-0#100', 1);
    const second = runner('api-0#400');
    expect(await second.adoptOrphans(false)).toBe(0);
    await dataSource.getRepository(RemovalRunEntity).update(sameHostLater, { heartbeatAt: new Date(Date.now() - 60_000) });
    expect(await second.adoptOrphans(false)).toBe(1);
    expect(await ended(second, sameHostLater)).toMatchObject({ owner: 'api-0#400' });
    await second.stop();
  });
});
