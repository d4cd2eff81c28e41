import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient, ClusterAddressGuard, type KubeClient } from '@ccos/api/data-access-kube';
import { eventually } from '@ccos/shared/util-timing/testing';
import { type TcpForwarder, startTcpForwarder } from '@ccos/tools/lab';
import { type ApiProcess, freePort } from '../support/api-process';
import { subscribe } from '../support/graphql-subscriptions';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * The service as the deployment runs it: API replicas (SERVICE_ROLE=api) and worker processes
 * (SERVICE_ROLE=worker) on one Postgres. The agents reach the APIs through one address that
 * spreads connections (a Service), people talk to whichever they like, the workers run the jobs
 * (host checks, agent starts, removals). Subscriptions see every event wherever it arrived, the
 * auto-approver runs on the one API holding its Lease and moves when that one dies, and `kill -9`
 * of a worker while it starts an agent and of the one running a removal, during five installs and
 * that removal, loses and doubles nothing.
 */

const LOOPBACK = ClusterAddressGuard.allowing('loopback');
const HOSTS = 6;
const WORKER = [{ key: 'node-role.kubernetes.io/worker', value: '' }];
const RS_UID = 'c0ffee00-0000-4000-8000-0000000000a1';

/** A node ended in a failed state while a test waited for another: no point waiting on. */
class NodeFailed extends Error {}

type Gql = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) => Promise<{ data?: T | null; errors?: Array<{ message: string }> }>;
interface StepEventView { seq: number; step: string; status: string }
interface RunView { id: string; status: string; events: StepEventView[] }

describe('replicas: two API processes and two workers on one Postgres, a third API started mid-test, agents behind one address', () => {
  let world: ScaleOutWorld;
  /** The API processes. */
  let replicas: ApiProcess[];
  /** The worker processes: every job runs on them. */
  let workers: ApiProcess[];
  /** What a Service does for the replicas: one address, connections spread, a dead replica skipped. */
  let balancer: TcpForwarder;
  let token: string;
  let admin: KubeClient;
  let db: pg.Client;
  const nodeIds: string[] = [];

  /** Asks the first replica that answers, as a client behind a load balancer would. */
  const gql: Gql = async (query, variables = {}) => {
    let lastError: unknown = null;
    for (const replica of replicas.filter((candidate) => candidate.running())) {
      try {
        return await replica.gql(query, variables, token);
      } catch (error) {
        lastError = error;
      }
    }
    throw new Error(`no replica answered: ${String(lastError)}`);
  };

  const statusOf = async (id: string) => (await gql<{ node: { status: string; statusReason: string | null } }>('query($id: ID!) { node(id: $id) { status statusReason } }', { id })).data?.node;

  const waitFor = <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> =>
    eventually(probe, {
      what,
      timeoutMs,
      intervalMs: 250,
      tolerate: (error) => !(error instanceof NodeFailed),
      context: () => [...replicas, ...workers].map((replica) => replica.output().slice(-1500)).join('\n----\n'),
    });

  /** Waits for one of `statuses`; a failed install or removal on the way ends the wait with its reason. */
  const waitForStatus = (id: string, statuses: readonly string[], timeoutMs: number) =>
    waitFor(`node ${id} in ${statuses.join('|')}`, async () => {
      const node = await statusOf(id);
      if (node && node.status.endsWith('_FAILED') && !statuses.includes(node.status)) {
        const runs = (await gql<{ node: { installRuns: unknown[] } }>('query($id: ID!) { node(id: $id) { installRuns { status failedStep reason events(first: 500) { step status message } } } }', { id })).data?.node.installRuns;
        throw new NodeFailed(`node ${id} is ${node.status}: ${node.statusReason}\nruns: ${JSON.stringify(runs)}\n${[...replicas, ...workers].map((replica) => replica.output().slice(-3000)).join('\n----\n')}`);
      }
      return node && statuses.includes(node.status) ? node : null;
    }, timeoutMs);

  /** The replica whose log says it leads the auto-approver now. */
  const leader = (): ApiProcess | undefined =>
    replicas.find((replica) => {
      if (!replica.running()) {
        return false;
      }
      const log = replica.output();
      return log.lastIndexOf('leading: deciding CSRs') > log.lastIndexOf('no longer leading');
    });

  const runsOf = async (id: string) => (await gql<{ node: { installRuns: RunView[] } }>('query($id: ID!) { node(id: $id) { installRuns { id status events { seq step status } } } }', { id })).data?.node.installRuns ?? [];

  /** Each run's events are numbered 1..n with no gap and no repeat, and a succeeded run started and finished each step once. */
  const expectEventsWhole = (run: RunView) => {
    expect(run.events.map((event) => event.seq)).toEqual(run.events.map((_, index) => index + 1));
    if (run.status === 'SUCCEEDED') {
      for (const edge of ['STARTED', 'SUCCEEDED']) {
        const steps = run.events.filter((event) => event.status === edge).map((event) => event.step);
        expect(new Set(steps).size).toBe(steps.length);
        expect(steps).toHaveLength(6);
      }
    }
  };

  beforeAll(async () => {
    const servicePort = await freePort('0.0.0.0');
    world = await startScaleOutWorld({
      hosts: HOSTS,
      name: 'replicas',
      csrAutoApprove: true,
      apiEnv: (lab) => ({ AGENT_API_URL: `https://${lab.gateway}:${servicePort}`, SERVICE_ROLE: 'api' }),
    });
    replicas = [world.api, await world.startReplica()];
    workers = [await world.startReplica({ SERVICE_ROLE: 'worker' }), await world.startReplica({ SERVICE_ROLE: 'worker' })];
    balancer = await startTcpForwarder({ host: '0.0.0.0', port: servicePort }, replicas.map((replica) => ({ host: '127.0.0.1', port: replica.port })));
    token = world.token;
    admin = createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: world.sim.adminKubeconfig ?? world.sim.kubeconfig } });
    db = new pg.Client({ connectionString: world.api.database?.url });
    await db.connect();
    for (let index = 0; index < HOSTS; index++) {
      // Added through either replica: where a request lands must not matter.
      const host = world.lab.hosts[index];
      const added = await replicas[index % 2].gql<{ addNode: { id: string } }>('mutation($input: AddNodeInput!) { addNode(input: $input) { id } }', {
        input: { clusterId: world.clusterId, hostname: host.hostname, ip: host.ip, sshPort: host.port, sshUser: host.user, password: host.password, labels: WORKER },
      }, token);
      expect(added.errors).toBeUndefined();
      nodeIds.push(added.data?.addNode.id ?? '');
    }
  });

  afterAll(async () => {
    await db?.end().catch(() => undefined);
    await balancer?.close();
    await world?.stop();
  });

  it('shows a subscriber on B every event the agent posts, in order, and approves each CSR once', async () => {
    const [first] = nodeIds;
    await waitForStatus(first, ['READY_TO_INSTALL'], 120_000);
    const progress = subscribe<{ installProgress: { run: { status: string } | null; events: StepEventView[] } }>(replicas[1].url, token, 'subscription($id: ID!) { installProgress(nodeId: $id) { run { status } events { seq step status } } }', { id: first });
    try {
      await progress.until((messages) => messages.length > 0, 20_000);
      const started = await replicas[0].gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: first }, token);
      expect(started.errors).toBeUndefined();
      await waitForStatus(first, ['JOINED'], 180_000);
      const [run] = await runsOf(first);
      expectEventsWhole(run);
      const seen = await progress.until((messages) => messages.flatMap((message) => message.installProgress.events).length >= run.events.length, 20_000);
      expect(seen.flatMap((message) => message.installProgress.events)).toEqual(run.events);
    } finally {
      await progress.close();
    }
    // Both replicas took agent connections, so the events above came through both.
    expect([...balancer.connections.values()].every((count) => count > 0)).toBe(true);
    expect(balancer.connections.size).toBe(2);

    const decisions = await db.query<{ csr_name: string; approvals: string }>("SELECT csr_name, count(*) AS approvals FROM csr_decisions WHERE decision = 'APPROVED' GROUP BY csr_name");
    expect(decisions.rows.length).toBeGreaterThanOrEqual(2);
    expect(decisions.rows.every((row) => Number(row.approvals) === 1)).toBe(true);
  });

  it('moves the auto-approver to another replica within 15 s of a kill -9 of the one holding the Lease', async () => {
    const holder = await waitFor('a replica leading the auto-approver', async () => leader(), 30_000);
    const killedAt = Date.now();
    await holder.kill(true);
    try {
      const next = await waitFor('another replica leading', async () => leader(), 30_000);
      const movedMs = Date.now() - killedAt;
      expect(next).not.toBe(holder);
      expect(movedMs).toBeLessThan(15_000);
      console.log(`replicas: the auto-approver moved ${movedMs} ms after the leader was killed`);
    } finally {
      await holder.restart();
    }
    // A third replica joins mid-test, and agents may reach it too.
    const third = await world.startReplica();
    replicas.push(third);
    balancer.addTarget({ host: '127.0.0.1', port: third.port });
  });

  it('finishes five installs and a removal through a kill -9 of a worker starting an agent and of the worker running the removal, losing and doubling no event', async () => {
    const [removed, ...installs] = nodeIds;
    const removedName = world.lab.hosts[0].hostname;
    // A pod under a budget that allows no disruption holds the drain until the budget is relaxed.
    await admin.call('create namespace', (o) => admin.core.createNamespace({ body: { metadata: { name: 'shop' } } }, o)).catch(() => undefined);
    await admin.call('create rs', (o) => admin.apps.createNamespacedReplicaSet({ namespace: 'shop', body: { metadata: { name: 'web', uid: RS_UID }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'web' }] } } } } }, o));
    await admin.call('create pod', (o) =>
      admin.core.createNamespacedPod({
        namespace: 'shop',
        body: {
          metadata: { name: 'web-1', labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: RS_UID, controller: true }] },
          spec: { nodeName: removedName, containers: [{ name: 'c', image: 'web' }] },
        },
      }, o),
    );
    // As a kubelet would report it: status is not taken on create.
    const pod = await admin.call('read pod', (o) => admin.core.readNamespacedPod({ name: 'web-1', namespace: 'shop' }, o));
    await admin.call('pod status', (o) => admin.core.replaceNamespacedPodStatus({ name: 'web-1', namespace: 'shop', body: { ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } }, o));
    await admin.call('create pdb', (o) => admin.policy.createNamespacedPodDisruptionBudget({ namespace: 'shop', body: { metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } } }, o));

    for (const id of installs) {
      await waitForStatus(id, ['READY_TO_INSTALL'], 180_000);
    }
    const phaseStarted = Date.now();
    const removal = await gql<{ removeNode: { id: string } }>('mutation($id: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $id, options: $o) { id } }', { id: removed, o: { confirmHostname: removedName, timeoutSeconds: 600, allowLastWorker: true } });
    expect(removal.errors).toBeUndefined();
    const runId = removal.data?.removeNode.id ?? '';
    let seenSoFar = '';
    await waitFor('the drain held by the budget', async () => {
      const run = (await gql<{ removalRun: { status: string; events: Array<{ kind: string; message: string }> } }>('query($id: ID!) { removalRun(id: $id) { status events { kind message } } }', { id: runId })).data?.removalRun;
      seenSoFar = JSON.stringify(run);
      return run?.events.some((event) => event.kind === 'POD_BLOCKED');
    }, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error).slice(0, 300)}\nremoval run: ${seenSoFar}`);
    });
    // The installs start while the drain is held. A worker starting an agent (an install.launch job it holds, for a second or two) is killed in the
    // middle of it; another gets the job within the engine's stale time, stops what the first attempt may have started and starts the agent.
    for (const [index, id] of installs.entries()) {
      const started = await replicas[index % replicas.length].gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id }, token);
      expect(started.errors).toBeUndefined();
    }
    let starting: ApiProcess | undefined;
    const lookedUntil = Date.now() + 30_000;
    while (!starting && Date.now() < lookedUntil) {
      const holders = await db.query<{ process: string }>(
        `SELECT beats.process FROM graphile_worker._private_jobs jobs
           JOIN graphile_worker._private_tasks tasks ON tasks.id = jobs.task_id
           JOIN job_worker_heartbeats beats ON beats.worker_id = jobs.locked_by
          WHERE tasks.identifier = 'install.launch'`,
      );
      starting = workers.find((worker) => holders.rows.some((row) => row.process.endsWith(`#${worker.pid()}`)));
    }
    if (!starting) {
      throw new Error(`no worker was seen starting an agent: ${JSON.stringify((await db.query('SELECT task_identifier, locked_by, attempts, last_error FROM graphile_worker.jobs')).rows)}`);
    }
    await starting.kill(true);
    console.log(`replicas: killed the worker pid ${String(starting.pid())} while it started an agent; ${Date.now() - phaseStarted} ms into the chaos phase`);
    await starting.restart();
    // The removal runs on a worker, never on an API process; the worker running it is killed while its drain is held.
    const owner = (await db.query<{ owner: string }>('SELECT owner FROM removal_runs WHERE id = $1', [runId])).rows[0]?.owner ?? '';
    expect(replicas.some((replica) => owner.endsWith(`#${replica.pid()}`)), `owner ${owner}`).toBe(false);
    const executing = workers.find((worker) => worker.running() && owner.endsWith(`#${worker.pid()}`));
    if (executing) {
      await executing.kill(true);
      console.log(`replicas: killed ${owner} while its drain was held; ${Date.now() - phaseStarted} ms into the chaos phase`);
      await executing.restart();
    } else {
      console.log(`replicas: the removal ran on the worker killed while starting an agent (${owner})`);
    }
    await admin.call('relax pdb', (o) => admin.policy.patchNamespacedPodDisruptionBudget({ name: 'web', namespace: 'shop', body: [{ op: 'replace', path: '/spec/minAvailable', value: 0 }] }, o));

    for (const id of installs) {
      await waitForStatus(id, ['JOINED'], 300_000);
    }
    console.log(`replicas: five installs joined ${Date.now() - phaseStarted} ms into the chaos phase`);
    const finished = await waitFor('the removal finished', async () => {
      const run = (await gql<{ removalRun: { status: string; events: Array<{ seq: number; kind: string; message: string }> } }>('query($id: ID!) { removalRun(id: $id) { status events { seq kind message } } }', { id: runId })).data?.removalRun;
      return run && run.status !== 'RUNNING' ? run : null;
    }, 120_000);
    expect(finished.status, JSON.stringify(finished.events.slice(-4))).toBe('SUCCEEDED');
    expect(finished.events.map((event) => event.seq)).toEqual(finished.events.map((_, index) => index + 1));
    const kinds = finished.events.map((event) => event.kind);
    expect(kinds.filter((kind) => kind === 'RESUMED').length).toBeGreaterThanOrEqual(1);
    expect(kinds.filter((kind) => kind === 'STARTED')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'NODE_DELETED')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'FINISHED')).toHaveLength(1);
    expect((await statusOf(removed))?.status).toBe('REMOVED');

    for (const id of installs) {
      // One run each, its agent started once: an agent start interrupted by the kill went on in the same run, each step run once.
      const runs = await runsOf(id);
      expect(runs.map((run) => run.status)).toEqual(['SUCCEEDED']);
      runs.forEach(expectEventsWhole);
    }
    const approvals = await db.query<{ csr_name: string; approvals: string }>("SELECT csr_name, count(*) AS approvals FROM csr_decisions WHERE decision = 'APPROVED' GROUP BY csr_name");
    expect(approvals.rows.length).toBeGreaterThanOrEqual(2 * (1 + installs.length));
    expect(approvals.rows.filter((row) => Number(row.approvals) !== 1)).toEqual([]);
  }, 480_000);

  it('hands a removal over at once when its replica is stopped with SIGTERM, instead of after the job engine finds the replica dead', async () => {
    const host = world.lab.hosts[1];
    await admin.call('create pod', (o) =>
      admin.core.createNamespacedPod({
        namespace: 'shop',
        body: {
          metadata: { name: 'web-2', labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: RS_UID, controller: true }] },
          spec: { nodeName: host.hostname, containers: [{ name: 'c', image: 'web' }] },
        },
      }, o),
    );
    const pod = await admin.call('read pod', (o) => admin.core.readNamespacedPod({ name: 'web-2', namespace: 'shop' }, o));
    await admin.call('pod status', (o) => admin.core.replaceNamespacedPodStatus({ name: 'web-2', namespace: 'shop', body: { ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } }, o));
    await admin.call('hold pdb', (o) => admin.policy.patchNamespacedPodDisruptionBudget({ name: 'web', namespace: 'shop', body: [{ op: 'replace', path: '/spec/minAvailable', value: 1 }] }, o));
    const removal = await gql<{ removeNode: { id: string } }>('mutation($id: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $id, options: $o) { id } }', { id: nodeIds[1], o: { confirmHostname: host.hostname, timeoutSeconds: 600, allowLastWorker: true } });
    expect(removal.errors).toBeUndefined();
    const runId = removal.data?.removeNode.id ?? '';
    const eventsOf = async () => (await gql<{ removalRun: { status: string; events: Array<{ kind: string; message: string }> } }>('query($id: ID!) { removalRun(id: $id) { status events { kind message } } }', { id: runId })).data?.removalRun;
    await waitFor('the drain held by the budget', async () => (await eventsOf())?.events.some((event) => event.kind === 'POD_BLOCKED'), 60_000);
    const owner = await waitFor('a worker running the removal', async () => (await db.query<{ owner: string | null }>('SELECT owner FROM removal_runs WHERE id = $1', [runId])).rows[0]?.owner, 30_000);
    const executing = workers.find((worker) => owner.endsWith(`#${worker.pid()}`));
    expect(executing, `owner ${owner}`).toBeDefined();
    const stoppedAt = Date.now();
    await executing?.kill(false);
    const resumed = await waitFor('another replica resuming the removal', async () => (await eventsOf())?.events.find((event) => event.kind === 'RESUMED'), 30_000);
    const handOverMs = Date.now() - stoppedAt;
    console.log(`replicas: a removal handed over ${handOverMs} ms after SIGTERM (${resumed.message})`);
    // A kill -9 costs the job engine's stale time (20 s) before another worker gets the job; a stop queues the run again at once (picked up at the next poll, 2 s).
    expect(handOverMs).toBeLessThan(12_000);
    await admin.call('relax pdb', (o) => admin.policy.patchNamespacedPodDisruptionBudget({ name: 'web', namespace: 'shop', body: [{ op: 'replace', path: '/spec/minAvailable', value: 0 }] }, o));
    const finished = await waitFor('the removal finished', async () => {
      const run = await eventsOf();
      return run && run.status !== 'RUNNING' ? run : null;
    }, 120_000);
    expect(finished.status).toBe('SUCCEEDED');
    expect(finished.events.filter((event) => event.kind === 'RESUMED')).toHaveLength(1);
    await executing?.restart();
  }, 300_000);
});
