import { randomUUID } from 'node:crypto';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AgentTokens } from '@ccos/api/data-access-db';
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
        `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at) VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '2 hours', now() + interval '2 hours')`,
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

