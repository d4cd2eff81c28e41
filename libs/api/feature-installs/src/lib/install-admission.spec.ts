import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Database, AgentTokens, InstallRunEntity, InstallRunStore, type NodeEntity, NodeStore, openDatabase } from '@ccos/api/data-access-db';
import { RecordingJobs, createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { SERVICE_FAILURE_CODES } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';
import { UNOBSERVED_INSTALLS } from './install-metrics';
import { InstallProgress } from './install-progress';
import { type AgentControl, INSTALL_LAUNCH_TASK, InstallService, STOP_AGENT_TASK } from './install.service';
import { RunBootstrapIdentities } from './run-bootstrap-identities';

const DEADLINE_MS = 90 * 60_000;
const logger = pino({ level: process.env['SPEC_LOG'] ?? 'silent' });
/** An ended run's admission of the next is not awaited by `finish`: on a busy machine it can take longer than Vitest's default second. */
const POLL = { timeout: 30_000, interval: 20 };

/** Launch jobs are only recorded here, so no agent starts and no identity is minted. */
const NO_AGENT: AgentControl = {
  channel: 'HTTPS',
  launch: async () => {
    throw new Error('no launch job runs in this spec');
  },
  stop: async () => undefined,
};

describe('join-storm admission: a cluster runs at most installsAtOnce installs, the rest wait in order', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let runs: InstallRunStore;
  let nodes: NodeStore;
  let jobs: RecordingJobs;
  let installs: InstallService;
  let clusterId: string;

  beforeAll(async () => {
    database = await createTestDatabase('ccos_install_admission');
    dataSource = await openDatabase({ url: database.url, maxConnections: 8 });
    runs = new InstallRunStore(dataSource);
    nodes = new NodeStore(dataSource, nodeChangePublisher(createInProcessEventBus()));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(async () => {
    clusterId = randomUUID();
    await dataSource.query(
      `INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind, installs_at_once) VALUES ($1, $2, 'https://127.0.0.1:6443', '198.18.0.2', 'x', 'KUBECONFIG', 2)`,
      [clusterId, `c-${clusterId.slice(0, 8)}`],
    );
    jobs = new RecordingJobs();
    const identities = new RunBootstrapIdentities(runs, { clientFor: async () => Promise.reject(new Error('no cluster in this spec')) }, 'ccos-scaler-bootstrap', logger);
    installs = new InstallService(runs, nodes, new AgentTokens(dataSource), NO_AGENT, identities, new InstallProgress(createInProcessEventBus()), logger, DEADLINE_MS, UNOBSERVED_INSTALLS, jobs);
  });

  /** `count` nodes ready to install on the spec's cluster, in one statement; their ids in order. */
  const readyNodes = async (count: number): Promise<string[]> => {
    const rows: Array<{ id: string }> = await dataSource.query(
      `INSERT INTO nodes (id, cluster_id, hostname, ip, status)
       SELECT gen_random_uuid(), $1::uuid, 'w-' || substr($1::text, 1, 8) || '-' || i, '198.18.' || (i / 250) || '.' || (i % 250 + 1), 'READY_TO_INSTALL'
         FROM generate_series(1, $2::int) AS i ORDER BY i RETURNING id`,
      [clusterId, count],
    );
    return rows.map((row) => row.id);
  };
  const launchesQueued = (): string[] => jobs.queued.filter((job) => job.task === INSTALL_LAUNCH_TASK).map((job) => String(job.payload['runId']));
  const row = (id: string): Promise<InstallRunEntity> => dataSource.getRepository(InstallRunEntity).findOneByOrFail({ id });
  const node = (id: string): Promise<NodeEntity> => nodes.get(id);

  it('starts the first installsAtOnce runs and puts the rest in line, oldest request first, without a deadline yet', async () => {
    const ids = await readyNodes(5);
    const started: InstallRunEntity[] = [];
    for (const id of ids) {
      started.push(await installs.install(id, 'operator'));
    }
    expect(launchesQueued()).toEqual([started[0].id, started[1].id]);
    expect((await row(started[0].id)).admittedAt).toBeInstanceOf(Date);
    expect(started.slice(2).map((run) => run.admittedAt)).toEqual([null, null, null]);
    const places = await runs.placesInLine(started.map((run) => run.id));
    expect(started.map((run) => places.get(run.id) ?? null)).toEqual([null, null, { position: 1, waiting: 3, limit: 2 }, { position: 2, waiting: 3, limit: 2 }, { position: 3, waiting: 3, limit: 2 }]);
    const running = await runs.runningInstalls(ids);
    expect(ids.map((id) => running.get(id)?.waitingForSlot)).toEqual([false, false, true, true, true]);
    // The batch view's step of a running install is its latest event's: none before the agent reports.
    expect(ids.map((id) => running.get(id)?.step)).toEqual([null, null, null, null, null]);
    const caps = { events: 100, bytes: 1e6, reserveEvents: 10, reserveBytes: 1e5 };
    const event = { status: 'STARTED', progress: 0, message: null, messageCoded: null, detail: null, occurredAt: new Date() } as const;
    await runs.admitEvent(started[0].id, { ...event, seq: 1, step: 'PREFLIGHT' }, 10, caps);
    await runs.admitEvent(started[0].id, { ...event, seq: 2, step: 'DOWNLOAD_BINARIES' }, 10, caps);
    expect((await runs.runningInstalls(ids)).get(ids[0])).toEqual({ step: 'DOWNLOAD_BINARIES', waitingForSlot: false });
    // Every node is being installed; the waiting ones say why nothing happens yet.
    expect((await node(ids[4])).status).toBe('INSTALLING');
    expect((await node(ids[4])).statusReasonCoded).toEqual({ code: 'node.waitingForInstallSlot', params: { limit: 2 } });
    expect((await node(ids[0])).statusReasonCoded).toEqual({ code: 'node.startingAgent', params: {} });
    // Waiting is neither overdue nor silent: the deadline and the stall watch start at admission.
    const muchLater = new Date(Date.now() + 10 * DEADLINE_MS);
    expect((await runs.overdue(muchLater)).map((run) => run.id).sort()).toEqual([started[0].id, started[1].id].sort());
    expect((await runs.silentSince(muchLater)).map((run) => run.id).sort()).toEqual([started[0].id, started[1].id].sort());
  });

  it('gives an ended run\'s slot to the oldest waiting run, whose deadline counts from then; a cancelled waiting run leaves the line', async () => {
    const ids = await readyNodes(4);
    const started: InstallRunEntity[] = [];
    for (const id of ids) {
      started.push(await installs.install(id, 'operator'));
    }
    await installs.cancel(ids[3], 'operator');
    // The agent is stopped by a worker, on the host's queue (the API process opens no SSH session).
    expect(jobs.queued.filter((job) => job.task === STOP_AGENT_TASK)).toEqual([
      { task: STOP_AGENT_TASK, payload: { runId: started[3].id, nodeId: ids[3], hostname: expect.any(String) }, options: expect.objectContaining({ key: `${STOP_AGENT_TASK}:${started[3].id}`, queue: expect.stringMatching(/^host:198\.18\./) }) },
    ]);
    expect((await runs.placesInLine([started[2].id])).get(started[2].id)).toEqual({ position: 1, waiting: 1, limit: 2 });
    expect(launchesQueued()).toHaveLength(2);

    const before = Date.now();
    await installs.finish(started[0], 'FAILED', null, message('install.noReason'), SERVICE_FAILURE_CODES.none);
    await expect.poll(launchesQueued, POLL).toEqual([started[0].id, started[1].id, started[2].id]);
    const admitted = await row(started[2].id);
    expect(admitted.admittedAt?.getTime()).toBeGreaterThanOrEqual(before);
    expect(admitted.deadlineAt?.getTime()).toBeGreaterThanOrEqual(before + DEADLINE_MS);
    expect(admitted.agentTokenExpiresAt).toEqual(admitted.deadlineAt);
    await expect.poll(async () => (await node(ids[2])).statusReasonCoded, POLL).toEqual({ code: 'node.startingAgent', params: {} });
    // The cancelled run never got a slot nor a launch.
    expect((await row(started[3].id)).admittedAt).toBeNull();
  });

  it('takes a thousand install requests at once without an error, and starts every one exactly once as slots free up', async () => {
    await dataSource.query('UPDATE clusters SET installs_at_once = 50 WHERE id = $1', [clusterId]);
    const ids = await readyNodes(1000);
    const asked = Date.now();
    const answers = await Promise.allSettled(ids.map((id) => installs.install(id, 'autoscaler')));
    const tookMs = Date.now() - asked;
    logger.info({ tookMs }, 'a thousand install requests answered');
    expect(answers.filter((answer) => answer.status === 'rejected')).toEqual([]);
    expect(tookMs).toBeLessThan(60_000);
    expect(launchesQueued()).toHaveLength(50);
    const all = answers.map((answer) => (answer as PromiseFulfilledResult<InstallRunEntity>).value);
    const places = await runs.placesInLine(all.map((run) => run.id));
    expect([...places.values()].map((place) => place.position).sort((a, b) => a - b)).toEqual(Array.from({ length: 950 }, (_, i) => i + 1));

    // The running runs end together, round after round, and each sweep's admission lets the next 50 in, until every run
    // has run (an ended run's own admission of the next is the spec above).
    const ended = new Set<string>();
    while (ended.size < all.length) {
      const running = launchesQueued().filter((id) => !ended.has(id));
      expect(running.length).toBe(Math.min(50, all.length - ended.size));
      await dataSource.query("UPDATE install_runs SET status = 'SUCCEEDED', finished_at = now() WHERE id = ANY($1::uuid[])", [running]);
      running.forEach((id) => ended.add(id));
      expect(await installs.admitAllWaiting()).toBe(Math.min(50, all.length - ended.size));
    }
    const launches = launchesQueued();
    expect(new Set(launches).size).toBe(launches.length);
    expect(new Set(launches)).toEqual(new Set(all.map((run) => run.id)));
  }, 180_000);

  it('starts waiting runs at once when the limit is raised', async () => {
    const ids = await readyNodes(4);
    for (const id of ids) {
      await installs.install(id, 'operator');
    }
    expect(launchesQueued()).toHaveLength(2);
    await dataSource.query('UPDATE clusters SET installs_at_once = 10 WHERE id = $1', [clusterId]);
    expect(await installs.admitAllWaiting()).toBe(2);
    expect(launchesQueued()).toHaveLength(4);
    expect(await installs.admitAllWaiting()).toBe(0);
  });
});
