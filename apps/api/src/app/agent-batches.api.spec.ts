import { randomUUID } from 'node:crypto';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AgentTokens } from '@ccos/api/data-access-db';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const REPORT = 'mutation($input: ReportStepInput!) { reportStep(input: $input) { accepted duplicate cancelRequested } }';
const REPORT_BATCH = 'mutation($inputs: [ReportStepInput!]!) { reportSteps(inputs: $inputs) { accepted duplicateSeqs cancelRequested } }';
const PROGRESS = 'subscription($n: ID!) { installProgress(nodeId: $n) { events { seq step status } } }';

interface Batch {
  reportSteps: { accepted: number; duplicateSeqs: number[]; cancelRequested: boolean };
}
interface Run {
  readonly nodeId: string;
  readonly runId: string;
  readonly token: string;
}

/**
 * `reportSteps`: the agent's spool as one request. Each event is stored once and in seq order
 * whatever order and repeats the batch has, subscribers hear each once, and what a batch cannot
 * take together (the end of the run, a cap) is decided event by event as `reportStep` does.
 */
describe('reportSteps: a batch of an agent\'s events', () => {
  let harness: ApiHarness;
  let admin: string;
  let clusterId: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    harness = await startApiHarness({ AGENT_PLAIN_HTTP: 'allow' });
    admin = await harness.login('admin', 'admin-password-for-tests');
    clusterId = randomUUID();
    await harness.api.dataSource.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'batches', 'https://10.0.0.1:6443', '10.0.0.1', 'x', 'TOKEN')`, [clusterId]);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await harness?.stop();
  });

  let hosts = 0;
  const newRun = async (): Promise<Run> => {
    const db = harness.api.dataSource;
    hosts += 1;
    const nodeId = randomUUID();
    const runId = randomUUID();
    const { token, hash } = new AgentTokens(db).issue();
    await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'INSTALLING')`, [nodeId, clusterId, `b${hosts}`, `10.0.1.${hosts}`]);
    await db.query(
      `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '2 hours', now() + interval '2 hours', now())`,
      [runId, nodeId, hash],
    );
    return { nodeId, runId, token };
  };
  const event = (run: Run, seq: number, step: string, status: string, message = `event ${seq}`) => ({ runId: run.runId, seq, step, status, progress: null, message, occurredAt: new Date().toISOString() });
  const stored = async (run: Run) =>
    (await harness.api.dataSource.query<Array<{ seq: number; message: string }>>('SELECT seq, message FROM step_events WHERE run_id = $1 ORDER BY id', [run.runId])).map((row) => [row.seq, row.message]);
  const runRow = async (run: Run) =>
    (await harness.api.dataSource.query<Array<{ status: string; event_count: number; last_event_at: Date | null }>>('SELECT status, event_count, last_event_at FROM install_runs WHERE id = $1', [run.runId]))[0];
  const node = async (run: Run) =>
    (await harness.api.dataSource.query<Array<{ status: string; status_reason: string | null }>>('SELECT status, status_reason FROM nodes WHERE id = $1', [run.nodeId]))[0];

  /** A subscriber of the node's install progress: every event it was sent after the snapshot. */
  const subscribe = async (nodeId: string): Promise<Array<{ seq: number; status: string }>> => {
    const heard: Array<{ seq: number; status: string }> = [];
    const client = createClient({ url: `${harness.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, connectionParams: { authorization: `Bearer ${admin}` } });
    clients.push(client);
    let snapshot = true;
    await new Promise<void>((resolve, reject) => {
      client.subscribe<{ installProgress: { events: Array<{ seq: number; status: string }> } }>({ query: PROGRESS, variables: { n: nodeId } }, {
        next: (message) => {
          if (snapshot) {
            snapshot = false;
            resolve();
            return;
          }
          heard.push(...(message.data?.installProgress.events ?? []).map(({ seq, status }) => ({ seq, status })));
        },
        error: reject,
        complete: () => undefined,
      });
    });
    return heard;
  };

  it('stores a batch out of order with a repeat and an event stored before once each, in seq order; subscribers hear each new one once, in order', async () => {
    const run = await newRun();
    const heard = await subscribe(run.nodeId);
    expect((await harness.gql(REPORT, { input: event(run, 1, 'PREFLIGHT', 'STARTED') }, run.token)).errors).toBeUndefined();
    const answer = await harness.gql<Batch>(REPORT_BATCH, {
      inputs: [event(run, 4, 'PREFLIGHT', 'SUCCEEDED'), event(run, 2, 'PREFLIGHT', 'PROGRESS'), event(run, 1, 'PREFLIGHT', 'STARTED'), event(run, 3, 'PREFLIGHT', 'PROGRESS'), event(run, 2, 'PREFLIGHT', 'PROGRESS', 'the same seq again')],
    }, run.token);
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.reportSteps).toEqual({ accepted: 4, duplicateSeqs: [1], cancelRequested: false });
    expect(await stored(run)).toEqual([[1, 'event 1'], [2, 'event 2'], [3, 'event 3'], [4, 'event 4']]);
    expect((await runRow(run)).event_count).toBe(4);
    expect((await runRow(run)).last_event_at).not.toBeNull();
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(4);
    expect(heard.map((entry) => entry.seq)).toEqual([1, 2, 3, 4]);
    // The step's end moved the node along, as a single report does.
    expect((await node(run)).status_reason).toContain('done');
    // Sent again whole (its answer was lost): nothing changes.
    const again = await harness.gql<Batch>(REPORT_BATCH, { inputs: [event(run, 2, 'PREFLIGHT', 'PROGRESS'), event(run, 3, 'PREFLIGHT', 'PROGRESS'), event(run, 4, 'PREFLIGHT', 'SUCCEEDED')] }, run.token);
    expect(again.data?.reportSteps.duplicateSeqs).toEqual([2, 3, 4]);
    expect((await runRow(run)).event_count).toBe(4);
    expect(heard).toHaveLength(4);
    // The events are their own record, as for reportStep: no audit entry for each batch.
    expect(await harness.api.dataSource.query(`SELECT action FROM audit_log WHERE action IN ('reportStep', 'reportSteps')`)).toEqual([]);
  });

  it('moves a stalled node back to INSTALLING when a batch of progress alone arrives from its agent', async () => {
    const run = await newRun();
    await harness.api.dataSource.query(`UPDATE nodes SET status = 'STALLED' WHERE id = $1`, [run.nodeId]);
    const answer = await harness.gql<Batch>(REPORT_BATCH, { inputs: [event(run, 1, 'DOWNLOAD_BINARIES', 'PROGRESS'), event(run, 2, 'DOWNLOAD_BINARIES', 'PROGRESS')] }, run.token);
    expect(answer.errors).toBeUndefined();
    expect((await node(run)).status).toBe('INSTALLING');
  });

  it('ends the run at a FAILED in the middle of a batch and refuses what follows it with RUN_FINISHED; the events up to it stay stored', async () => {
    const run = await newRun();
    const answer = await harness.gql<Batch>(REPORT_BATCH, {
      inputs: [event(run, 1, 'PREFLIGHT', 'STARTED'), event(run, 2, 'PREFLIGHT', 'FAILED', 'no space left'), event(run, 3, 'DOWNLOAD_BINARIES', 'STARTED')],
    }, run.token);
    expect(answer.errors?.[0]?.extensions?.['code']).toBe('RUN_FINISHED');
    expect(await stored(run)).toEqual([[1, 'event 1'], [2, 'no space left']]);
    expect((await runRow(run)).status).toBe('FAILED');
    expect((await node(run)).status).toBe('INSTALL_FAILED');
    // The agent then sends one at a time: the stored ones are duplicates, the one after the end is refused.
    expect((await harness.gql<{ reportStep: { duplicate: boolean } }>(REPORT, { input: event(run, 2, 'PREFLIGHT', 'FAILED', 'no space left') }, run.token)).data?.reportStep.duplicate).toBe(true);
    expect((await harness.gql(REPORT, { input: event(run, 3, 'DOWNLOAD_BINARIES', 'STARTED') }, run.token)).errors?.[0]?.extensions?.['code']).toBe('RUN_FINISHED');
  });

  it('takes a batch that reaches the run\'s cap event by event: what fits is stored, the rest refused with LIMIT_EXCEEDED', async () => {
    const run = await newRun();
    await harness.api.dataSource.query('UPDATE install_runs SET event_count = 1999 WHERE id = $1', [run.runId]);
    const answer = await harness.gql<Batch>(REPORT_BATCH, { inputs: [event(run, 1, 'PREFLIGHT', 'PROGRESS'), event(run, 2, 'PREFLIGHT', 'PROGRESS'), event(run, 3, 'PREFLIGHT', 'PROGRESS')] }, run.token);
    expect(answer.errors?.[0]?.extensions?.['code']).toBe('LIMIT_EXCEEDED');
    expect(await stored(run)).toEqual([[1, 'event 1']]);
    expect((await runRow(run)).event_count).toBe(2000);
  });

  it('refuses a batch of two runs, an empty or oversized one, and another run\'s events, storing nothing', async () => {
    const run = await newRun();
    const other = await newRun();
    const code = async (inputs: unknown[], token = run.token) => (await harness.gql(REPORT_BATCH, { inputs }, token)).errors?.[0]?.extensions?.['code'];
    expect(await code([event(run, 1, 'PREFLIGHT', 'STARTED'), event(other, 1, 'PREFLIGHT', 'STARTED')])).toBe('BAD_USER_INPUT');
    expect(await code([])).toBe('BAD_USER_INPUT');
    expect(await code(Array.from({ length: 101 }, (_, index) => event(run, index + 1, 'PREFLIGHT', 'PROGRESS')))).toBe('BAD_USER_INPUT');
    expect(await code([event(other, 1, 'PREFLIGHT', 'STARTED')])).toBe('FORBIDDEN');
    expect(await code([event(run, 1, 'PREFLIGHT', 'STARTED')], 'agt_not-a-token')).toBe('UNAUTHENTICATED');
    expect(await stored(run)).toEqual([]);
    expect(await stored(other)).toEqual([]);
  });

  it('still runs an install reported one event at a time (an agent from before batches) to SUCCEEDED', async () => {
    const run = await newRun();
    const steps = ['PREFLIGHT', 'DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET'];
    let seq = 0;
    for (const step of steps) {
      for (const status of ['STARTED', 'SUCCEEDED']) {
        seq += 1;
        const answer = await harness.gql<{ reportStep: { accepted: boolean } }>(REPORT, { input: event(run, seq, step, status) }, run.token);
        expect(answer.errors).toBeUndefined();
      }
    }
    expect((await runRow(run)).status).toBe('SUCCEEDED');
    expect((await runRow(run)).event_count).toBe(12);
  });
});
