import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, ClusterEntity, JobEngine, NodeStore, RemovalRunEntity, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { type SeedOwner, type SimWithClient, seedBudget, seedController, seedNode, seedOf, seedPod, startSimWithClient } from '@ccos/api/data-access-kube/testing';
import { SshPool } from '@ccos/api/data-access-ssh';
import { createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { DEFAULT_REMOVAL_OPTIONS } from '@ccos/shared/domain';
import { SystemClock } from '@ccos/shared/util-timing';
import { removalReplica } from '../testing/removal-replica';

const SHOP: SeedOwner = { kind: 'ReplicaSet', name: 'shop', uid: 'd1f0c7e2-0000-4000-8000-0000000000b1' };

/** w1 runs a pod whose budget allows no disruption until the test deletes it; w2 keeps the cluster a worker. */
const SEED = seedOf(
  seedNode('w1', { worker: true }),
  seedNode('w2', { worker: true }),
  seedController(SHOP, 'shop', 'shop'),
  seedPod({ name: 'shop-1', namespace: 'shop', node: 'w1', app: 'shop', owner: SHOP, graceSeconds: 0 }),
  seedBudget('shop-budget', 'shop', 'shop', 'minAvailable: 1'),
);

/**
 * Removal runs on the job engine, two worker processes on one Postgres (each its own engine and
 * removal feature): a run is executed by whichever holds its job, and one that stops hands it over.
 */
describe('removal runs on the job engine', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let world: SimWithClient;
  let nodes: NodeStore;
  let clusterId: string;
  const ssh = new SshPool({ maxSessions: 1 });
  const logger = pino({ level: 'silent' });
  const shutDowns: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    world = await startSimWithClient({ seed: SEED });
    nodes = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
    clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: 'sim', apiServerUrl: world.sim.url, vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'KUBECONFIG' });
  });
  afterAll(async () => {
    await Promise.all(shutDowns.map((shutDown) => shutDown()));
    await ssh.close();
    await world?.stop();
    await dataSource?.destroy();
    await database?.drop();
  });

  /** A worker process: its job engine (workers not started yet) and its removal feature on it. */
  const worker = async (identity: string) => {
    const jobs = new JobEngine({ databaseUrl: database.url, concurrency: 1, longConcurrency: 2, pollIntervalMs: 100, embedded: false, logger, heartbeatMs: 100, staleAfterMs: 1000 });
    await jobs.open();
    const replica = await removalReplica({ dataSource, world, nodes, ssh, jobs, clock: new SystemClock(), identity, evictionRetryMs: 100, heartbeatMs: 100 });
    /** Shuts down as the service does: the removals first (handing their runs over), then the workers. */
    const shutDown = async () => {
      await replica.runner.stop();
      await jobs.stopWorkers();
    };
    shutDowns.push(async () => {
      await shutDown();
      await jobs.stop();
    });
    return { jobs, ...replica, shutDown };
  };
  const runOf = (id: string) => dataSource.getRepository(RemovalRunEntity).findOneByOrFail({ id });
  const eventKinds = async (id: string) => (await dataSource.query<Array<{ kind: string }>>('SELECT kind FROM removal_events WHERE run_id = $1 ORDER BY seq', [id])).map((row) => row.kind);

  it('a worker that stops hands its run over at once; the other resumes it at its phase and finishes it, each event once', async () => {
    const first = await worker('worker-a#1');
    const second = await worker('worker-b#2');
    await first.jobs.startWorkers();
    const node = await nodes.create({ clusterId, hostname: 'w1', ip: '198.18.0.31', status: 'JOINED', everJoined: true });
    const run = await first.service.start(node.id, { ...DEFAULT_REMOVAL_OPTIONS, timeoutSeconds: 0 }, 'alice');
    await expect.poll(async () => eventKinds(run.id), { timeout: 10_000 }).toContain('POD_BLOCKED');
    expect(await runOf(run.id)).toMatchObject({ owner: 'worker-a#1', status: 'RUNNING', phase: 'DRAIN' });
    expect(first.runner.blockedDrains()).toEqual([expect.objectContaining({ nodeName: 'w1' })]);

    await second.jobs.startWorkers();
    const stoppedAt = Date.now();
    await first.shutDown();
    await expect.poll(async () => (await runOf(run.id)).owner, { timeout: 10_000 }).toBe('worker-b#2');
    // Handed over, not left for the job engine to unlock when the worker looks dead (20 s in the service).
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    await expect.poll(async () => second.runner.blockedDrains().length, { timeout: 10_000 }).toBe(1);

    await world.client.call('delete pdb', (o) => world.client.policy.deleteNamespacedPodDisruptionBudget({ name: 'shop-budget', namespace: 'shop' }, o));
    const ended = await second.service.ended(run.id, 20_000);
    expect(ended).toMatchObject({ status: 'SUCCEEDED', phase: 'DONE', owner: 'worker-b#2' });
    expect(await nodes.get(node.id)).toMatchObject({ status: 'REMOVED' });
    const kinds = await eventKinds(run.id);
    expect(kinds.filter((kind) => ['STARTED', 'RESUMED', 'NODE_DELETED', 'FINISHED'].includes(kind))).toEqual(['STARTED', 'RESUMED', 'NODE_DELETED', 'FINISHED']);
    expect(second.done.finished).toEqual(['SUCCEEDED']);
    expect(first.done.finished).toEqual([]);
    expect(second.done.host).toEqual(['stop kubelet on 198.18.0.11']);
    await second.shutDown();
    // Nothing is left queued: the handed-over job and the one that finished the run are gone.
    expect(Number((await dataSource.query<Array<{ n: string }>>('SELECT count(*) AS n FROM graphile_worker._private_jobs'))[0].n)).toBe(0);
  });

  it('a cancel asked on a process that does not execute the run reaches the worker that does', async () => {
    const executing = await worker('worker-c#3');
    const api = await worker('api-d#4');
    await executing.jobs.startWorkers();
    await world.client.call('budget again', (o) => world.client.policy.createNamespacedPodDisruptionBudget({ namespace: 'shop', body: { metadata: { name: 'shop-budget' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'shop' } } } } }, o));
    const node = await nodes.create({ clusterId, hostname: 'w2', ip: '198.18.0.32', status: 'JOINED', everJoined: true });
    await world.client.call('pod on w2', (o) =>
      world.client.core.createNamespacedPod({ namespace: 'shop', body: { metadata: { name: 'shop-2', labels: { app: 'shop' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'shop', uid: SHOP.uid, controller: true }] }, spec: { nodeName: 'w2', containers: [{ name: 'c', image: 'shop' }] } } }, o),
    );
    // Healthy, as a kubelet reports it: the budget then allows no disruption.
    const pod = await world.client.call('read pod', (o) => world.client.core.readNamespacedPod({ name: 'shop-2', namespace: 'shop' }, o));
    await world.client.call('pod status', (o) => world.client.core.replaceNamespacedPodStatus({ name: 'shop-2', namespace: 'shop', body: { ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } }, o));
    const run = await api.service.start(node.id, { ...DEFAULT_REMOVAL_OPTIONS, timeoutSeconds: 0, allowLastWorker: true }, 'alice');
    await expect.poll(async () => (await runOf(run.id)).owner, { timeout: 10_000 }).toBe('worker-c#3');
    await expect.poll(async () => eventKinds(run.id), { timeout: 10_000 }).toContain('POD_BLOCKED').catch(async (error: unknown) => {
      throw new Error(`${String(error)}: ${JSON.stringify(await dataSource.query('SELECT kind, message FROM removal_events WHERE run_id = $1 ORDER BY seq', [run.id]))}`);
    });
    const cancelled = await api.service.cancel(node.id, 'bob');
    expect(cancelled).toMatchObject({ status: 'CANCELLED', owner: 'worker-c#3' });
    expect(await nodes.get(node.id)).toMatchObject({ status: 'DRAIN_FAILED' });
    await executing.shutDown();
  });

  it('a cancel asked before any worker took the run: the run says it started, then the cancel, and ends CANCELLED', async () => {
    const waiting = await worker('worker-e#5');
    await world.client.call('node w3', (o) => world.client.core.createNode({ body: { metadata: { name: 'w3', labels: { 'node-role.kubernetes.io/worker': '' } } } }, o));
    const node = await nodes.create({ clusterId, hostname: 'w3', ip: '198.18.0.33', status: 'JOINED', everJoined: true });
    const run = await waiting.service.start(node.id, { ...DEFAULT_REMOVAL_OPTIONS, timeoutSeconds: 0, allowLastWorker: true }, 'alice');
    const cancelling = waiting.service.cancel(node.id, 'bob');
    await expect.poll(async () => (await runOf(run.id)).cancelRequested, { timeout: 10_000 }).toBe(true);
    await waiting.jobs.startWorkers();
    expect(await cancelling).toMatchObject({ status: 'CANCELLED' });
    expect((await eventKinds(run.id)).slice(0, 2)).toEqual(['STARTED', 'CANCEL_REQUESTED']);
    await waiting.shutDown();
  });
});
