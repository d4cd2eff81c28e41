import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentTokens } from '@ccos/api/data-access-db';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const REPORT = 'mutation($input: ReportStepInput!) { reportStep(input: $input) { accepted duplicate cancelRequested } }';

interface AgentRunSetup {
  readonly runId: string;
  readonly nodeId: string;
  readonly token: string;
}

/**
 * What a hostile (or confused) agent can still do with its token once its run has ended, and how
 * much one run can make the service store and send: the token's grace after a run is for the
 * agent's last words (re-sends, whether it was cancelled, a failed run's diagnostics), nothing more.
 */
describe('an agent token after its run, and what one run may store', () => {
  let harness: ApiHarness;
  let clusterId: string;
  let hosts = 0;

  beforeAll(async () => {
    // The rules do not depend on the channel; plain HTTP keeps these tests simple.
    harness = await startApiHarness({ AGENT_PLAIN_HTTP: 'allow' });
    clusterId = randomUUID();
    await harness.api.dataSource.query(
      `INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'after-run', 'https://10.0.0.1:6443', '10.0.0.1', 'x', 'TOKEN')`,
      [clusterId],
    );
  });

  afterAll(async () => {
    await harness?.stop();
  });

  /** A node INSTALLING with a RUNNING run whose agent token ends with the run's deadline, as the service creates them. */
  const runningRun = async (): Promise<AgentRunSetup> => {
    const db = harness.api.dataSource;
    hosts += 1;
    const nodeId = randomUUID();
    const runId = randomUUID();
    await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'INSTALLING')`, [nodeId, clusterId, `after-${hosts}`, `10.0.1.${hosts}`]);
    const { token, hash } = new AgentTokens(db).issue();
    await db.query(
      `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '2 hours', now() + interval '2 hours', now())`,
      [runId, nodeId, hash],
    );
    return { runId, nodeId, token };
  };
  const event = (run: AgentRunSetup, seq: number, overrides: Record<string, unknown> = {}) => ({
    runId: run.runId, seq, step: 'PREFLIGHT', status: 'PROGRESS', progress: 1, message: 'm', occurredAt: new Date().toISOString(), ...overrides,
  });
  const report = (run: AgentRunSetup, input: Record<string, unknown>) =>
    harness.gql<{ reportStep: { accepted: boolean; duplicate: boolean; cancelRequested: boolean } }>(REPORT, { input }, run.token);
  const storedSeqs = async (run: AgentRunSetup): Promise<number[]> =>
    (await harness.api.dataSource.query('SELECT seq FROM step_events WHERE run_id = $1 ORDER BY seq', [run.runId])).map((row: { seq: number }) => row.seq);
  const metric = async (pattern: RegExp): Promise<number> => Number(pattern.exec(await (await fetch(`${harness.url}/metrics`)).text())?.[1] ?? 0);
  const refusedMetric = (reason: string) => metric(new RegExp(`^ccos_agent_events_refused_total\\{reason="${reason}"\\} (\\d+)$`, 'm'));

  describe('a finished run takes no events', () => {
    it.each(['FAILED', 'SUCCEEDED', 'CANCELLED'])('refuses a new event of a %s run within the token\'s grace (RUN_FINISHED), answers a re-send as a duplicate and still lets agentRun in', async (status) => {
      const run = await runningRun();
      expect((await report(run, event(run, 1, { status: 'STARTED' }))).data?.reportStep).toMatchObject({ accepted: true, duplicate: false });
      if (status === 'FAILED') {
        // As the agent ends a run: its FAILED event.
        expect((await report(run, event(run, 2, { status: 'FAILED', message: 'dnf failed', detail: { code: 'RPM_MISSING_DEPENDENCY' } }))).errors).toBeUndefined();
      } else {
        // As the service ends it (START_KUBELET's success, an operator's cancel): the token keeps its 10-minute grace.
        await harness.api.dataSource.query(
          `UPDATE install_runs SET status = $2, finished_at = now(), cancel_requested = $3, agent_token_expires_at = now() + interval '10 minutes' WHERE id = $1`,
          [run.runId, status, status === 'CANCELLED'],
        );
      }
      const before = await storedSeqs(run);
      const refusedBefore = await refusedMetric('RUN_FINISHED');
      for (const seq of [3, 4, 5]) {
        const late = await report(run, event(run, seq, { status: seq === 3 ? 'FAILED' : 'PROGRESS', message: 'x'.repeat(4000) }));
        expect(late.data).toBeNull();
        expect(late.errors?.[0]?.extensions).toMatchObject({ code: 'RUN_FINISHED', runStatus: status, messageCode: 'agentToken.runFinished' });
        expect(late.errors?.[0]?.message).toContain(`has ended (${status})`);
      }
      expect(await storedSeqs(run)).toEqual(before);
      expect(await refusedMetric('RUN_FINISHED')).toBe(refusedBefore + 3);
      // The agent's last words still work: a re-send whose answer was lost, and asking whether it was cancelled.
      expect((await report(run, event(run, 1, { status: 'STARTED' }))).data?.reportStep).toEqual({ accepted: true, duplicate: true, cancelRequested: status === 'CANCELLED' });
      // agentRun authenticates and goes on to ask the run's cluster, which this spec does not register for real.
      const asked = await harness.gql('{ agentRun { runId cancelRequested } }', {}, run.token);
      expect(['UNAUTHENTICATED', 'FORBIDDEN', 'RUN_FINISHED']).not.toContain(asked.errors?.[0]?.extensions?.['code']);
    });
  });

  describe('diagnostics: one bundle per run, from a failed run', () => {
    const upload = (run: AgentRunSetup, text: string) =>
      fetch(`${harness.url}/agent/diagnostics`, { method: 'POST', headers: { authorization: `Bearer ${run.token}`, 'content-type': 'application/gzip' }, body: gzipSync(text) });
    const stored = async (run: AgentRunSetup): Promise<string[]> =>
      (await harness.api.dataSource.query('SELECT content FROM install_diagnostics WHERE run_id = $1', [run.runId])).map((row: { content: Buffer }) => gunzipSync(row.content).toString('utf8'));

    it('answers 425 while the run runs (the agent retries after its FAILED event), takes the failed run\'s bundle, refuses a replacement with 409 and keeps the first', async () => {
      const run = await runningRun();
      const early = await upload(run, 'too early');
      expect(early.status).toBe(425);
      expect(await early.json()).toMatchObject({ messageCode: 'diagnostics.runNotFailedYet' });
      expect(await stored(run)).toEqual([]);
      expect((await report(run, event(run, 1, { status: 'FAILED', message: 'dnf failed', detail: { code: 'RPM_MISSING_DEPENDENCY' } }))).errors).toBeUndefined();
      expect((await upload(run, 'what the agent saw')).status).toBe(204);
      for (const forged of ['a replacement', 'another replacement']) {
        const again = await upload(run, forged);
        expect(again.status).toBe(409);
        expect(await again.json()).toMatchObject({ error: `install run ${run.runId} has its diagnostics already; the first bundle is kept`, messageCode: 'diagnostics.alreadyUploaded' });
      }
      expect(await stored(run)).toEqual(['what the agent saw']);
    });

    it('stores one of many uploads sent at once, the rest 409', async () => {
      const run = await runningRun();
      expect((await report(run, event(run, 1, { status: 'FAILED', message: 'failed' }))).errors).toBeUndefined();
      const statuses = await Promise.all(Array.from({ length: 8 }, (_, index) => upload(run, `bundle ${index}`).then((response) => response.status)));
      expect(statuses.filter((status) => status === 204)).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(7);
      expect(await stored(run)).toHaveLength(1);
    });

    it.each(['SUCCEEDED', 'CANCELLED'])('refuses a bundle for a %s run (409) within the token\'s grace', async (status) => {
      const run = await runningRun();
      await harness.api.dataSource.query(`UPDATE install_runs SET status = $2, finished_at = now(), agent_token_expires_at = now() + interval '10 minutes' WHERE id = $1`, [run.runId, status]);
      const refused = await upload(run, 'not a failure');
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({ messageCode: 'diagnostics.runNotFailed', messageParams: { runStatus: status } });
      expect(await stored(run)).toEqual([]);
    });
  });

  describe('caps on what one run stores', () => {
    it('refuses a hostile agent\'s 3,000 events of 20 KB past the run\'s 4 MiB (LIMIT_EXCEEDED, counted, recorded on the run), still takes the event that ends the run, and one read of the run stays small', async () => {
      const run = await runningRun();
      const heavy = (seq: number) => event(run, seq, { message: 'm'.repeat(4000), detail: { filler: 'd'.repeat(16_000) } });
      const refusedBefore = await refusedMetric('EVENT_BYTES');
      const outcomes: string[] = [];
      const started = performance.now();
      // Eight at a time, as a hostile agent would not wait for each answer; straight to the service
      // (the harness's own bookkeeping of each request would dominate the time).
      const flood = async (input: Record<string, unknown>) =>
        (await (await fetch(`${harness.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${run.token}` }, body: JSON.stringify({ query: REPORT, variables: { input } }) })).json()) as {
          errors?: Array<{ extensions?: Record<string, unknown> }>;
        };
      for (let seq = 1; seq <= 3000; seq += 8) {
        const batch = await Promise.all(Array.from({ length: 8 }, (_, index) => flood(heavy(seq + index))));
        outcomes.push(...batch.map((result) => (result.errors ? `${result.errors[0]?.extensions?.['code']}:${result.errors[0]?.extensions?.['cap']}` : 'stored')));
      }
      const seconds = (performance.now() - started) / 1000;
      const stored = outcomes.filter((outcome) => outcome === 'stored').length;
      const refused = outcomes.filter((outcome) => outcome === 'LIMIT_EXCEEDED:EVENT_BYTES').length;
      expect(stored + refused).toBe(outcomes.length);
      const row = (await harness.api.dataSource.query(
        `SELECT r.event_count, r.event_bytes, r.events_capped_at, (SELECT count(*) FROM step_events e WHERE e.run_id = r.id)::int AS rows FROM install_runs r WHERE r.id = $1`,
        [run.runId],
      ))[0] as { event_count: number; event_bytes: string; events_capped_at: Date | null; rows: number };
      expect(row.rows).toBe(stored);
      expect(row.event_count).toBe(stored);
      expect(Number(row.event_bytes)).toBeLessThanOrEqual(4 * 1024 * 1024);
      expect(stored).toBeLessThan(220);
      expect(row.events_capped_at).not.toBeNull();
      expect(await refusedMetric('EVENT_BYTES')).toBe(refusedBefore + refused);
      // STARTED, SUCCEEDED and FAILED have a reserve: the agent can still end its run.
      const failed = await report(run, event(run, 3001, { status: 'FAILED', message: 'the host ran out of disk', detail: { code: 'DISK_FULL' } }));
      expect(failed.data?.reportStep).toMatchObject({ accepted: true, duplicate: false });

      const viewer = await harness.tokenFor('VIEWER');
      const response = await fetch(`${harness.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${viewer}` },
        body: JSON.stringify({ query: 'query($id: ID!) { installRun(id: $id) { status eventsCappedAt events { seq message detail } } }', variables: { id: run.runId } }),
      });
      const body = await response.text();
      const view = (JSON.parse(body) as { data: { installRun: { status: string; eventsCappedAt: string | null; events: unknown[] } } }).data.installRun;
      expect(view.status).toBe('FAILED');
      expect(view.eventsCappedAt).not.toBeNull();
      expect(body.length).toBeLessThan(6 * 1024 * 1024);
      expect(view.events.length).toBeLessThanOrEqual(500);
      console.info(`3,000 hostile events in ${seconds.toFixed(1)} s: ${stored} stored (${row.event_bytes} bytes), ${refused} refused; one installRun read: ${(body.length / 1024 / 1024).toFixed(2)} MB`);
    }, 300_000);
  });

  describe('a run\'s events a page at a time', () => {
    it('answers at most 500 events a read, the rest after the last seq read, and refuses a larger page', async () => {
      const run = await runningRun();
      await harness.api.dataSource.query(
        `INSERT INTO step_events (run_id, seq, step, status, message, occurred_at) SELECT $1, s, 'START_KUBELET', 'PROGRESS', 'waiting for the CSR approval', now() FROM generate_series(1, 1200) AS s`,
        [run.runId],
      );
      const viewer = await harness.tokenFor('VIEWER');
      const read = (args: string) =>
        harness.gql<{ installRun: { lastSeq: number; events: Array<{ seq: number }> } }>(`query($id: ID!) { installRun(id: $id) { lastSeq events${args} { seq } } }`, { id: run.runId }, viewer);
      const first = await read('');
      expect(first.data?.installRun.lastSeq).toBe(1200);
      expect(first.data?.installRun.events.map((e) => e.seq)).toEqual(Array.from({ length: 500 }, (_, index) => index + 1));
      const next = await read('(first: 500, after: 500)');
      expect(next.data?.installRun.events.map((e) => e.seq)).toEqual(Array.from({ length: 500 }, (_, index) => index + 501));
      const last = await read('(after: 1000)');
      expect(last.data?.installRun.events.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, index) => index + 1001));
      const tooMany = await read('(first: 501)');
      expect(tooMany.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'first' });
    });
  });
});
