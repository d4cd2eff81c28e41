import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, ClusterEntity, NodeStore, RemovalRunEntity, type RemovalRunStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, RecordingJobs, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { type SeedOwner, type SimWithClient, seedBudget, seedController, seedNode, seedOf, seedPod, startSimWithClient } from '@ccos/api/data-access-kube/testing';
import { SshPool } from '@ccos/api/data-access-ssh';
import { createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { DEFAULT_REMOVAL_OPTIONS, type RemovalOptions } from '@ccos/shared/domain';
import { FakeClock } from '@ccos/shared/util-timing/testing';
import { HOST_TARGET } from '../testing/phase-harness';
import { removalReplica } from '../testing/removal-replica';
import { REMOVAL_TASK } from './removal-runner';

const WEB: SeedOwner = { kind: 'ReplicaSet', name: 'web', uid: 'd1f0c7e2-0000-4000-8000-0000000000a1' };
const DB: SeedOwner = { kind: 'ReplicaSet', name: 'db', uid: 'd1f0c7e2-0000-4000-8000-0000000000a2' };
const LEDGER: SeedOwner = { kind: 'ReplicaSet', name: 'ledger', uid: 'd1f0c7e2-0000-4000-8000-0000000000a3' };

/** w1: a pod that goes at once and one whose budget allows no disruption. w3, cordoned already: a pod under a budget that never gives way. w2 keeps the cluster a worker. */
const SEED = seedOf(
  seedNode('w1', { worker: true }),
  seedNode('w2', { worker: true }),
  seedNode('w3', { worker: true, unschedulable: true }),
  seedController(WEB, 'shop', 'web'),
  seedController(DB, 'shop', 'db'),
  seedController(LEDGER, 'shop', 'ledger'),
  seedPod({ name: 'web-1', namespace: 'shop', node: 'w1', app: 'web', owner: WEB, graceSeconds: 0 }),
  seedPod({ name: 'db-1', namespace: 'shop', node: 'w1', app: 'db', owner: DB, graceSeconds: 0 }),
  seedPod({ name: 'ledger-1', namespace: 'shop', node: 'w3', app: 'ledger', owner: LEDGER, graceSeconds: 0 }),
  seedBudget('db-budget', 'shop', 'db', 'minAvailable: 1'),
  seedBudget('ledger-budget', 'shop', 'ledger', 'minAvailable: 1'),
);

/**
 * Moves virtual time one wake-up at a time, each once all `loops` of the run (its heartbeat among
 * them) sleep on the clock again, until the run has ended. While one of them waits on the cluster
 * or the database instead, time stands still: with the heartbeat alone counted, ten virtual
 * minutes of heartbeats once passed during one real eviction on a loaded machine.
 */
function passTimeUntilSettled(clock: FakeClock, execution: Promise<void>, runId: string, loops: number): Promise<void> {
  return clock.passTimeUntil(execution, loops, 600_000, `removal run ${runId} ending`);
}

/**
 * Whole removal runs against kube-sim and Postgres on virtual time: heartbeats, eviction retries and
 * the drain's timeout all wait on the FakeClock, which the test moves only once every loop of the run
 * waits on it (its requests answered), so a slow machine makes the test slower, never different.
 */
describe('removal runs on virtual time', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let world: SimWithClient;
  let nodes: NodeStore;
  let clusterId: string;
  const ssh = new SshPool({ maxSessions: 1 });

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    world = await startSimWithClient({ seed: SEED });
    nodes = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
    clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: 'sim', apiServerUrl: world.sim.url, vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'KUBECONFIG' });
  });
  afterAll(async () => {
    await ssh.close();
    await world?.stop();
    await dataSource?.destroy();
    await database?.drop();
  });

  /** One process's removal feature on `clock`; its jobs run when the spec says. */
  const replica = async (clock: FakeClock, identity: string) => {
    const jobs = new RecordingJobs();
    const made = await removalReplica({ dataSource, world, nodes, ssh, jobs, clock, identity });
    /** Runs the run's job (as a worker would): it resolves once the run has ended, or stopped here. */
    const execute = (runId: string) => jobs.run(REMOVAL_TASK, { runId });
    return { ...made, jobs, execute };
  };

  const kubeNode = async (name: string) => (await world.client.call('list', (o) => world.client.core.listNode({}, o))).items.find((node) => node.metadata?.name === name);
  const podsOn = async (name: string) =>
    (await world.client.call('list', (o) => world.client.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${name}` }, o))).items.map((pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`);
  const eventsOf = async (runs: RemovalRunStore, runId: string) => (await runs.events.list(runId)).map((event) => ({ seq: event.seq, kind: event.kind, phase: event.phase, pod: event.pod, code: event.messageCoded?.code ?? null, message: event.message }));

  it('goes through every phase: the drain retries a budget’s refusal every 5 s of virtual time until it gives way', async () => {
    const clock = new FakeClock(new Date().toISOString(), false);
    const { runner, service, runs, done, jobs, execute } = await replica(clock, 'api-0#1');
    const node = await nodes.create({ clusterId, hostname: 'w1', status: 'JOINED', everJoined: true });
    // No drain timeout: its timer would be one more loop waiting on the clock.
    const options: RemovalOptions = { ...DEFAULT_REMOVAL_OPTIONS, timeoutSeconds: 0, cleanHost: true };
    const run = await service.start(node.id, options, 'alice');
    // Its job, on the host's queue: it waits there behind any other job of the host.
    expect(jobs.queued).toEqual([{ task: REMOVAL_TASK, payload: { runId: run.id, nodeId: node.id, hostname: 'w1' }, options: expect.objectContaining({ key: `${REMOVAL_TASK}:${run.id}`, queue: 'host:w1' }) }]);
    expect(jobs.longTasks).toContain(REMOVAL_TASK);
    const execution = execute(run.id);

    // Loops waiting on the clock while the budget holds the drain: the run's heartbeat and db-1's next eviction.
    await clock.passTimeUntil(() => done.refusals >= 3, 2, 60_000, 'three refusals');
    expect(clock.monotonic()).toBe(10_000);
    // Held since the first refusal after web-1's eviction: the first retry's at the latest.
    expect(runner.blockedDrains()).toEqual([{ clusterId, nodeName: 'w1', since: expect.any(Number), timeoutSeconds: 0 }]);
    expect(runner.blockedDrains()[0].since).toBeLessThanOrEqual(clock.now() - 5_000);
    expect(await podsOn('w1')).toEqual(['shop/db-1']);

    await world.client.call('delete pdb', (o) => world.client.policy.deleteNamespacedPodDisruptionBudget({ name: 'db-budget', namespace: 'shop' }, o));
    await passTimeUntilSettled(clock, execution, run.id, 2);

    expect(done.finished).toEqual(['SUCCEEDED']);
    expect(await dataSource.getRepository(RemovalRunEntity).findOneByOrFail({ id: run.id })).toMatchObject({ status: 'SUCCEEDED', phase: 'DONE', reason: 'removed by alice: drained, Node deleted', blocking: [] });
    expect(await nodes.get(node.id)).toMatchObject({ status: 'REMOVED' });
    expect(await kubeNode('w1')).toBeUndefined();
    expect(await kubeNode('w2')).toBeDefined();
    expect(done.host).toEqual([`stop kubelet on ${HOST_TARGET.host}`, `clean ${HOST_TARGET.host}`]);
    expect(done.denied).toEqual(['csr-w1']);
    expect(runner.blockedDrains()).toEqual([]);

    const events = await eventsOf(runs, run.id);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    // Each event carries the phase its run was in when it happened, not the run's phase now (DONE).
    expect(events.filter((event) => event.pod === null).map((event) => [event.kind, event.phase])).toEqual([
      ['STARTED', 'DRAIN'],
      ['CORDONED', 'DRAIN'],
      ['DRAIN_FINISHED', 'DRAIN'],
      ['KUBELET_STOPPED', 'STOP_KUBELET'],
      ['NODE_DELETED', 'DELETE_NODE'],
      ['CSRS_DENIED', 'DENY_CSRS'],
      ['TOKENS_REVOKED', 'REVOKE_TOKENS'],
      ['HOST_CLEANED', 'CLEAN_HOST'],
      ['FINISHED', 'DONE'],
    ]);
    // A follower stops at the final status: by the time it is written, the whole log (FINISHED too) is stored.
    expect(runs.trace).toEqual([`ended SUCCEEDED with ${events.length} events stored`]);
    expect(new Set(events.filter((event) => event.pod !== null).map((event) => event.phase))).toEqual(new Set(['DRAIN']));
    // The budget refused db-1 three times or more; the block is recorded once.
    expect(events.filter((event) => event.pod === 'shop/db-1').map((event) => event.kind)).toEqual(['POD_BLOCKED', 'POD_EVICTED', 'POD_DELETED']);
    expect(events.filter((event) => event.pod === 'shop/web-1').map((event) => event.kind)).toEqual(['POD_EVICTED', 'POD_DELETED']);
    expect(events.find((event) => event.kind === 'DRAIN_FINISHED')).toMatchObject({ code: 'removal.event.drained', message: 'drained: 2 pods evicted, 0 left on the node (DaemonSet and mirror pods)' });
    // A job queued again for the ended run (a start queues every RUNNING run's) leaves it as it is.
    await execute(run.id);
    expect((await eventsOf(runs, run.id)).length).toBe(events.length);
    await runner.stop();
  });

  it('a run resumed by another worker keeps the timeout it started with: it ends DRAIN_FAILED when the budget holds past it', async () => {
    const clock = new FakeClock(new Date().toISOString(), false);
    const node = await nodes.create({ clusterId, hostname: 'w3', status: 'REMOVING', everJoined: true });
    const id = randomUUID();
    // Started 10 s ago with a 43 s timeout by a worker that died since: 33 s are left.
    await dataSource.getRepository(RemovalRunEntity).insert({
      id,
      nodeId: node.id,
      clusterId,
      nodeName: 'w3',
      status: 'RUNNING',
      phase: 'DRAIN',
      options: { ...DEFAULT_REMOVAL_OPTIONS, timeoutSeconds: 43 },
      requestedBy: 'alice',
      owner: 'api-0#100',
      heartbeatAt: new Date(),
      startedAt: new Date(clock.now() - 10_000),
    });
    const { runner, runs, done, execute } = await replica(clock, 'api-0#200');
    const execution = execute(id);

    // Loops waiting on the clock: the heartbeat, the drain's timeout and ledger-1's next eviction.
    await clock.passTime(30_000, 3);
    expect(runner.blockedDrains()).toEqual([{ clusterId, nodeName: 'w3', since: clock.now() - 30_000, timeoutSeconds: 43 }]);
    await passTimeUntilSettled(clock, execution, id, 3);

    expect(clock.monotonic()).toBeGreaterThanOrEqual(33_000);
    expect(done.finished).toEqual(['FAILED']);
    const run = await dataSource.getRepository(RemovalRunEntity).findOneByOrFail({ id });
    expect(run).toMatchObject({ status: 'FAILED', phase: 'DRAIN', owner: 'api-0#200', blocking: [{ pod: 'shop/ledger-1', pdb: 'ledger-budget' }] });
    expect(run.reason).toMatch(/^the drain did not finish \(TIMEOUT\): the drain did not finish within 33 s; still on the node: shop\/ledger-1\. Blocking: shop\/ledger-1 \(PodDisruptionBudget shop\/ledger-budget: .*\)\. The node stays cordoned and its Node object was not deleted\.$/);
    expect(await nodes.get(node.id)).toMatchObject({ status: 'DRAIN_FAILED' });
    expect((await kubeNode('w3'))?.spec?.unschedulable).toBe(true);
    expect(await podsOn('w3')).toEqual(['shop/ledger-1']);
    expect(done.host).toEqual([]);
    expect((await eventsOf(runs, id)).map((event) => [event.kind, event.code])).toEqual([
      ['RESUMED', 'removal.event.resumed'],
      ['CORDONED', 'removal.event.alreadyCordoned'],
      ['POD_BLOCKED', 'drain.twoSentences'],
      ['DRAIN_FAILED', 'removal.blocking'],
      ['FINISHED', 'removal.event.failed'],
    ]);
    await runner.stop();
  });
});
