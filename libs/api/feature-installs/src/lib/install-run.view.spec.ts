import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Database, InstallRunNotices, InstallRunStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { InstallRunView } from './install-run.view';

const RUNS_KEPT = 3;

describe('InstallRunView: a run\'s events read once, then only the new ones', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let runs: InstallRunStore;
  let view: InstallRunView;
  let reads: Array<{ runId: string; afterSeq: number }>;
  let nodeId: string;

  beforeAll(async () => {
    database = await createTestDatabase('ccos_run_view');
    dataSource = await openDatabase({ url: database.url, maxConnections: 3 });
    const clusterId = randomUUID();
    nodeId = randomUUID();
    await dataSource.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'c', 'https://198.18.0.1:6443', '198.18.0.1', 'x', 'TOKEN')`, [clusterId]);
    await dataSource.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, 'w1', '198.18.0.10', 'INSTALLING')`, [nodeId, clusterId]);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  beforeEach(() => {
    runs = new InstallRunStore(dataSource);
    const list = runs.events.list.bind(runs.events);
    reads = [];
    runs.events.list = (runId: string, afterSeq = 0, limit?: number) => {
      reads.push({ runId, afterSeq });
      return list(runId, afterSeq, limit);
    };
    view = new InstallRunView(runs, new InstallRunNotices(dataSource), RUNS_KEPT);
  });

  async function newRun(status = 'RUNNING'): Promise<string> {
    const runId = randomUUID();
    await dataSource.query(`INSERT INTO install_runs (id, node_id, status, requested_by) VALUES ($1, $2, $3, 'operator')`, [runId, nodeId, status]);
    return runId;
  }

  async function store(runId: string, ...seqs: number[]): Promise<void> {
    for (const seq of seqs) {
      await dataSource.query(`INSERT INTO step_events (run_id, seq, step, status, progress, message, occurred_at) VALUES ($1, $2, 'PREFLIGHT', $3, $4, $5, now())`, [
        runId, seq, seq === 1 ? 'STARTED' : 'PROGRESS', seq, `event ${seq}`,
      ]);
    }
  }

  const viewOf = async (runId: string) => view.of(await runs.get(runId));

  it('reads only the events after those it read before, and shows them all with the steps they make', async () => {
    const runId = await newRun();
    await store(runId, 1, 2, 3);
    expect((await viewOf(runId)).events.map((event) => event.seq)).toEqual([1, 2, 3]);
    await store(runId, 4, 5);
    const second = await viewOf(runId);
    expect(second.events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(second.steps.find((step) => step.step === 'PREFLIGHT')).toMatchObject({ status: 'RUNNING', progress: 5, message: 'event 5' });
    expect(reads.filter((read) => read.runId === runId).map((read) => read.afterSeq)).toEqual([0, 3]);
  });

  it('finds an event stored after a higher one (a retried batch, another replica): only a gap-free run from seq 1 is kept', async () => {
    const runId = await newRun();
    await store(runId, 1, 2, 4);
    expect((await viewOf(runId)).events.map((event) => event.seq)).toEqual([1, 2, 4]);
    await store(runId, 3);
    expect((await viewOf(runId)).events.map((event) => event.seq)).toEqual([1, 2, 3, 4]);
    expect((await viewOf(runId)).events.map((event) => event.seq)).toEqual([1, 2, 3, 4]);
    expect(reads.filter((read) => read.runId === runId).map((read) => read.afterSeq)).toEqual([0, 2, 4]);

    const lateFirst = await newRun();
    await store(lateFirst, 2, 3);
    expect((await viewOf(lateFirst)).events.map((event) => event.seq)).toEqual([2, 3]);
    await store(lateFirst, 1);
    expect((await viewOf(lateFirst)).events.map((event) => event.seq)).toEqual([1, 2, 3]);
  });

  it('keeps nothing of an ended run: it is read whole each time', async () => {
    const runId = await newRun('SUCCEEDED');
    await store(runId, 1, 2);
    expect((await viewOf(runId)).events.map((event) => event.seq)).toEqual([1, 2]);
    expect((await viewOf(runId)).events.map((event) => event.seq)).toEqual([1, 2]);
    expect(reads.filter((read) => read.runId === runId).map((read) => read.afterSeq)).toEqual([0, 0]);
  });

  it(`keeps the events of the ${RUNS_KEPT} runs read last: an older run is read whole again`, async () => {
    const oldest = await newRun();
    await store(oldest, 1);
    await viewOf(oldest);
    const others = await Promise.all(Array.from({ length: RUNS_KEPT }, () => newRun()));
    await dataSource.query(`INSERT INTO step_events (run_id, seq, step, status, occurred_at) SELECT id, 1, 'PREFLIGHT', 'STARTED', now() FROM unnest($1::uuid[]) AS id`, [others]);
    for (const runId of others) {
      await viewOf(runId);
    }
    reads = [];
    await viewOf(oldest);
    await viewOf(others.at(-1) as string);
    expect(reads.map((read) => read.afterSeq)).toEqual([0, 1]);
  });
});
