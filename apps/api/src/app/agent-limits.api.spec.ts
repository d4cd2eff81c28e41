import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentTokens } from '@ccos/api/data-access-db';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const REPORT = 'mutation($input: ReportStepInput!) { reportStep(input: $input) { accepted duplicate } }';
const EIGHT_MIB = 8 * 1024 * 1024;

/** What a raw HTTP upload saw: the status line (if any) and how long it took. */
interface RawUpload {
  readonly status: number | null;
  readonly body: string;
  readonly ms: number;
  /** Body bytes written by the time the answer came. */
  readonly sent: number;
  readonly closedByServer: boolean;
}

/**
 * Sends the headers and only the first `sendFirst` bytes of the body, then waits up to
 * `waitMs` for an answer without sending more: an answer proves the server did not wait for
 * (read) the rest. `chunked` streams instead of declaring a length, and keeps sending.
 * `untilClosed` then waits for the server to close the connection.
 */
async function upload(port: number, headers: Record<string, string>, options: { declared?: number; sendFirst: number; chunked?: boolean; waitMs: number; untilClosed?: boolean }): Promise<RawUpload> {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const started = performance.now();
  let answer = '';
  let sent = 0;
  let closedByServer = false;
  let stop = false;
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closedByServer = true;
      resolve();
    }),
  );
  const head = [
    'POST /agent/diagnostics HTTP/1.1',
    'Host: 127.0.0.1',
    'Content-Type: application/gzip',
    options.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${options.declared ?? options.sendFirst}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n');
  socket.write(head);
  const chunk = Buffer.alloc(64 * 1024, 0x1f);
  const writeChunk = (data: Buffer): Promise<void> =>
    new Promise((resolve) => {
      const payload = options.chunked ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
      if (socket.write(payload)) {
        resolve();
      } else {
        socket.once('drain', resolve);
        socket.once('close', resolve);
      }
    });
  while (sent < options.sendFirst && !stop && !socket.destroyed) {
    const piece = chunk.subarray(0, Math.min(chunk.length, options.sendFirst - sent));
    await writeChunk(piece);
    sent += piece.length;
    if (answer.includes('\r\n\r\n')) {
      stop = true;
    }
  }
  const deadline = started + options.waitMs;
  while (!answer.includes('\r\n\r\n') && performance.now() < deadline && !closedByServer) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const ms = performance.now() - started;
  if (options.untilClosed) {
    await closed;
  }
  socket.destroy();
  const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
  return { status: status ? Number(status[1]) : null, body: answer.split('\r\n\r\n').slice(1).join('\r\n\r\n'), ms, sent, closedByServer };
}

describe('limits on what an agent (or anyone) can send', () => {
  let harness: ApiHarness;
  let port: number;
  let runId: string;
  let token: string;
  /** The token of a failed run: diagnostics are taken from failed runs only. */
  let failedToken: string;

  beforeAll(async () => {
    // The limits do not depend on the channel; plain HTTP keeps these raw-socket tests simple.
    harness = await startApiHarness({ AGENT_PLAIN_HTTP: 'allow' });
    port = Number(new URL(harness.url).port);
    const db = harness.api.dataSource;
    const clusterId = randomUUID();
    const nodeId = randomUUID();
    runId = randomUUID();
    await db.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'limits', 'https://10.0.0.1:6443', '10.0.0.1', 'x', 'TOKEN')`, [clusterId]);
    await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, 'w1', '10.0.0.11', 'INSTALLING')`, [nodeId, clusterId]);
    const issued = new AgentTokens(db).issue();
    token = issued.token;
    // As the service creates runs: the agent token ends with the run's deadline.
    await db.query(
      `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '2 hours', now() + interval '2 hours', now())`,
      [runId, nodeId, issued.hash],
    );
    const failed = new AgentTokens(db).issue();
    failedToken = failed.token;
    await db.query(
      `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, finished_at) VALUES ($1, $2, 'FAILED', 'operator', $3, now() + interval '2 hours', now() + interval '10 minutes', now())`,
      [randomUUID(), nodeId, failed.hash],
    );
  });

  afterAll(async () => {
    await harness?.stop();
  });

  const event = (seq: number, overrides: Record<string, unknown> = {}) => ({ runId, seq, step: 'PREFLIGHT', status: 'PROGRESS', progress: 1, message: 'm', occurredAt: new Date().toISOString(), ...overrides });
  const report = (input: Record<string, unknown>) => harness.gql<{ reportStep: { accepted: boolean; duplicate: boolean } }>(REPORT, { input }, token);
  const storedEvents = async () => Number((await harness.api.dataSource.query('SELECT count(*) AS n FROM step_events WHERE run_id = $1', [runId]))[0].n);

  describe('/agent/diagnostics', () => {
    it('refuses a bad token before reading the body: 401 while almost all of an 8 MiB upload is unsent, then closes', async () => {
      const refused = await upload(port, { Authorization: 'Bearer agt_not-a-real-token' }, { declared: EIGHT_MIB, sendFirst: 64 * 1024, waitMs: 3000, untilClosed: true });
      expect(refused.status).toBe(401);
      expect(refused.body).toContain('a valid agent token is required');
      expect(refused.ms).toBeLessThan(1000);
      expect(refused.sent).toBeLessThanOrEqual(64 * 1024);
      expect(refused.closedByServer).toBe(true);
      const anonymous = await upload(port, {}, { declared: EIGHT_MIB, sendFirst: 64 * 1024, waitMs: 3000 });
      expect(anonymous.status).toBe(401);
    });

    it('refuses a declared size over 8 MiB before reading it, and stops reading a streamed one at 8 MiB', async () => {
      const declared = await upload(port, { Authorization: `Bearer ${failedToken}` }, { declared: EIGHT_MIB + 1, sendFirst: 64 * 1024, waitMs: 3000 });
      expect(declared.status).toBe(413);
      expect(declared.body).toContain(`the diagnostics bundle is ${EIGHT_MIB + 1} bytes; at most ${EIGHT_MIB} bytes (8 MiB) are accepted`);
      expect(declared.ms).toBeLessThan(1000);
      const streamed = await upload(port, { Authorization: `Bearer ${failedToken}` }, { chunked: true, sendFirst: 3 * EIGHT_MIB, waitMs: 10_000 });
      // The server answers 413 and closes with the rest of the upload unread (a body of unknown
      // length is never drained: answerWithoutReadingBody); TCP then resets the connection, which can
      // discard the answer before the client reads it. What must hold either way: the server
      // stopped the upload and stored nothing.
      expect(streamed.sent).toBeLessThan(3 * EIGHT_MIB);
      expect(streamed.status === 413 || (streamed.status === null && streamed.closedByServer)).toBe(true);
      if (streamed.status === 413) {
        expect(streamed.body).toContain(`is larger than ${EIGHT_MIB} bytes`);
      }
      expect(await harness.api.dataSource.query('SELECT run_id FROM install_diagnostics')).toEqual([]);
    });

    it('stores a bundle within the limit', async () => {
      const response = await fetch(`${harness.url}/agent/diagnostics`, { method: 'POST', headers: { authorization: `Bearer ${failedToken}`, 'content-type': 'application/gzip' }, body: gzipSync('summary') });
      expect(response.status).toBe(204);
      expect(await harness.api.dataSource.query('SELECT run_id FROM install_diagnostics')).toHaveLength(1);
    });
  });

  describe('reportStep', () => {
    it('refuses a detail over 48 KiB as JSON, naming the field and the limit, and stores nothing', async () => {
      const before = await storedEvents();
      const result = await report(event(1, { status: 'FAILED', detail: { outputTail: 'x'.repeat(55_000) } }));
      expect(result.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.message).toMatch(/^input\.detail is 550\d\d bytes as JSON; at most 49152 are accepted: send a shorter excerpt/);
      expect(await storedEvents()).toBe(before);
      expect((await report(event(1, { detail: { outputTail: 'x'.repeat(4096) } }))).data?.reportStep).toEqual({ accepted: true, duplicate: false });
    });

    it('stops PROGRESS events at 2000 per run, still takes the events that finish a run, and answers re-sends as duplicates', async () => {
      const db = harness.api.dataSource;
      // As if 2000 events had been stored: the run's count is what its cap is checked against.
      await db.query(`UPDATE install_runs SET event_count = 2000 WHERE id = $1`, [runId]);
      const progress = await report(event(5001));
      expect(progress.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 2000, cap: 'EVENT_COUNT' });
      expect(progress.errors?.[0]?.message).toMatch(/already has 2000 step events, the most one run may report with progress; this PROGRESS event of PREFLIGHT was not stored\. The step can still report STARTED, SUCCEEDED or FAILED\./);
      expect((await report(event(1))).data?.reportStep).toEqual({ accepted: true, duplicate: true });
      expect((await report(event(5001, { status: 'SUCCEEDED', step: 'PREFLIGHT' }))).data?.reportStep).toEqual({ accepted: true, duplicate: false });
      await db.query(`UPDATE install_runs SET event_count = event_count + 49 WHERE id = $1`, [runId]);
      const failed = await report(event(5051, { status: 'FAILED', step: 'DOWNLOAD_BINARIES' }));
      expect(failed.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 2050 });
      expect(await storedEvents()).toBe(2);
      expect((await db.query('SELECT events_capped_at FROM install_runs WHERE id = $1', [runId]))[0].events_capped_at).not.toBeNull();
    });
  });
});
