import { randomUUID } from 'node:crypto';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AgentTokens } from '@ccos/api/data-access-db';
import { LISTENER_APPLICATION_NAME } from '@ccos/api/util-graphql';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const REPORT = 'mutation($input: ReportStepInput!) { reportStep(input: $input) { accepted duplicate } }';
const PROGRESS = 'subscription($n: ID!) { installProgress(nodeId: $n) { nodeId run { id status lastEventAt } events { seq step status message } } }';

interface Progress {
  installProgress: { nodeId: string; run: { id: string; status: string; lastEventAt: string | null } | null; events: Array<{ seq: number; step: string; status: string; message: string | null }> };
}

/**
 * installProgress with many subscribers on one node: each event is resolved once for all of them
 * (bench/agent-ingestion.ts measures the delivery), so every subscriber must still get its own
 * ordered stream: the snapshot, then exactly one message per event, carrying that event only.
 */
describe('installProgress with many subscribers', () => {
  let harness: ApiHarness;
  let admin: string;
  const clients: Client[] = [];
  const runs: Array<{ nodeId: string; runId: string; token: string }> = [];

  beforeAll(async () => {
    // 30 subscribers stand for 30 browsers; they share the admin's one session here.
    harness = await startApiHarness({ AGENT_PLAIN_HTTP: 'allow', WS_CONNECTIONS_PER_SESSION: '64', WS_CONNECTIONS_PER_USER: '64' });
    admin = await harness.login('admin', 'admin-password-for-tests');
    const db = harness.api.dataSource;
    const clusterId = randomUUID();
    await db.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'progress', 'https://10.0.0.1:6443', '10.0.0.1', 'x', 'TOKEN')`, [clusterId]);
    for (const [hostname, ip] of [['w1', '10.0.0.11'], ['w2', '10.0.0.12']]) {
      const nodeId = randomUUID();
      const runId = randomUUID();
      const { token, hash } = new AgentTokens(db).issue();
      await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'INSTALLING')`, [nodeId, clusterId, hostname, ip]);
      await db.query(
        `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '2 hours', now() + interval '2 hours', now())`,
        [runId, nodeId, hash],
      );
      runs.push({ nodeId, runId, token });
    }
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await harness?.stop();
  });

  /** A subscriber on its own connection; resolves once the snapshot arrived. */
  const subscribe = async (nodeId: string): Promise<Progress['installProgress'][]> => {
    const messages: Progress['installProgress'][] = [];
    const client = createClient({ url: `${harness.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, connectionParams: { authorization: `Bearer ${admin}` } });
    clients.push(client);
    await new Promise<void>((resolve, reject) => {
      client.subscribe<Progress>(
        { query: PROGRESS, variables: { n: nodeId } },
        {
          next: (message) => {
            if (message.errors) {
              reject(new Error(JSON.stringify(message.errors)));
            }
            if (message.data) {
              messages.push(message.data.installProgress);
            }
            resolve();
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    return messages;
  };

  it('gives each of 30 subscribers the snapshot, then each event once, in order, with the run as of that event; other nodes hear nothing', async () => {
    const [watched, other] = runs;
    const streams = await Promise.all(Array.from({ length: 30 }, () => subscribe(watched.nodeId)));
    const elsewhere = await subscribe(other.nodeId);
    for (const stream of streams) {
      expect(stream).toEqual([{ nodeId: watched.nodeId, run: { id: watched.runId, status: 'RUNNING', lastEventAt: null }, events: [] }]);
    }
    const sent = [1, 2, 3, 4, 5].map((seq) => ({ runId: watched.runId, seq, step: 'PREFLIGHT', status: seq === 5 ? 'SUCCEEDED' : 'PROGRESS', progress: seq * 20, message: `check ${seq}`, occurredAt: new Date().toISOString() }));
    for (const input of sent) {
      const answer = await harness.gql<{ reportStep: { accepted: boolean; duplicate: boolean } }>(REPORT, { input }, watched.token);
      expect(answer.data?.reportStep).toEqual({ accepted: true, duplicate: false });
    }
    await expect.poll(() => streams.every((stream) => stream.length === 1 + sent.length), { timeout: 30_000 }).toBe(true);
    for (const stream of streams) {
      expect(stream.slice(1).map((message) => message.events)).toEqual(sent.map(({ seq, step, status, message }) => [{ seq, step, status, message }]));
      expect(stream.slice(1).every((message) => message.nodeId === watched.nodeId && message.run?.id === watched.runId && message.run.lastEventAt !== null)).toBe(true);
    }
    // A re-sent event is a duplicate and is not delivered again.
    const again = await harness.gql<{ reportStep: { duplicate: boolean } }>(REPORT, { input: sent[0] }, watched.token);
    expect(again.data?.reportStep.duplicate).toBe(true);
    // A late subscriber's snapshot holds every event so far.
    const late = await subscribe(watched.nodeId);
    expect(late[0]?.events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(streams.every((stream) => stream.length === 1 + sent.length)).toBe(true);
    expect(elsewhere).toHaveLength(1);
  });

  it('catches a subscriber up once this replica\'s event listener is back: what was stored meanwhile arrives once, after the last event it was sent', async () => {
    const [watched] = runs;
    const stream = await subscribe(watched.nodeId);
    expect(stream[0]?.events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
    const sixth = { runId: watched.runId, seq: 6, step: 'DOWNLOAD_BINARIES', status: 'STARTED', message: 'writing', occurredAt: new Date().toISOString() };
    expect((await harness.gql<{ reportStep: { accepted: boolean } }>(REPORT, { input: sixth }, watched.token)).data?.reportStep.accepted).toBe(true);
    await expect.poll(() => stream.length).toBe(2);
    // A subscriber that came after it: its snapshot holds the six, and no event has reached it since.
    const later = await subscribe(watched.nodeId);
    expect(later[0]?.events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6]);

    // Another replica stored two events whose notifications this one never heard (written here without any).
    const db = harness.api.dataSource;
    for (const seq of [7, 8]) {
      await db.query(`INSERT INTO step_events (run_id, seq, step, status, message, occurred_at) VALUES ($1, $2, 'DOWNLOAD_BINARIES', $3, $4, now())`, [watched.runId, seq, seq === 7 ? 'PROGRESS' : 'SUCCEEDED', `file ${seq}`]);
    }
    // Its listening connection drops (a Postgres restart, a failover) and comes back.
    const cut = (await db.query('SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [LISTENER_APPLICATION_NAME])) as Array<{ cut: boolean }>;
    expect(cut).toEqual([{ cut: true }]);
    await expect.poll(() => stream.length, { timeout: 15_000 }).toBe(3);
    expect(stream[2]).toMatchObject({ nodeId: watched.nodeId, run: { id: watched.runId, status: 'RUNNING' } });
    const caughtUp = [
      { seq: 7, step: 'DOWNLOAD_BINARIES', status: 'PROGRESS', message: 'file 7' },
      { seq: 8, step: 'DOWNLOAD_BINARIES', status: 'SUCCEEDED', message: 'file 8' },
    ];
    expect(stream[2].events).toEqual(caughtUp);
    await expect.poll(() => later.length).toBe(2);
    expect(later[1].events).toEqual(caughtUp);
    // A second gap: only what came after the catch-up.
    await db.query(`INSERT INTO step_events (run_id, seq, step, status, message, occurred_at) VALUES ($1, 9, 'INSTALL_PACKAGES', 'STARTED', 'file 9', now())`, [watched.runId]);
    await expect.poll(async () => ((await db.query('SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [LISTENER_APPLICATION_NAME])) as unknown[]).length, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => [stream.length, later.length], { timeout: 15_000 }).toEqual([4, 3]);
    expect([stream[3].events, later[2].events]).toEqual([[{ seq: 9, step: 'INSTALL_PACKAGES', status: 'STARTED', message: 'file 9' }], [{ seq: 9, step: 'INSTALL_PACKAGES', status: 'STARTED', message: 'file 9' }]]);
    expect(harness.logs.some((line) => line.includes('event listener connected again'))).toBe(true);
  });

  it('answers the agent\'s next report with cancelRequested once an operator asked to cancel the run, also for a re-sent event', async () => {
    const [, run] = runs;
    const ask = (seq: number) => harness.gql<{ reportStep: { accepted: boolean; duplicate: boolean; cancelRequested: boolean } }>(
      'mutation($input: ReportStepInput!) { reportStep(input: $input) { accepted duplicate cancelRequested } }',
      { input: { runId: run.runId, seq, step: 'PREFLIGHT', status: 'PROGRESS', progress: 10, message: 'checking', occurredAt: new Date().toISOString() } },
      run.token,
    );
    expect((await ask(1)).data?.reportStep).toEqual({ accepted: true, duplicate: false, cancelRequested: false });
    // What cancelInstall records for the agent (it also stops the agent over SSH, which this harness has no host for).
    await harness.api.dataSource.query('UPDATE install_runs SET cancel_requested = true WHERE id = $1', [run.runId]);
    expect((await ask(2)).data?.reportStep).toEqual({ accepted: true, duplicate: false, cancelRequested: true });
    expect((await ask(1)).data?.reportStep).toEqual({ accepted: true, duplicate: true, cancelRequested: true });
  });
});

