import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CreateUserDocument } from '@ccos/shared/api-schema';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { sampleValue, scrape } from '../support/metrics-text';

/** The close codes README.md documents (apps/api/src/app/websocket-admission.ts). */
const CLOSED_FOR_SESSION = 4431;
const CLOSED_FOR_USER = 4432;
const CLOSED_FOR_PROCESS = 4433;
const PER_SESSION = 8;
const PER_USER = 32;
const PER_PROCESS = 40;
const SUBSCRIPTIONS = 32;
const VIEWER_PASSWORD = 'viewer-password-for-websockets';

/** A graphql-ws connection as the service answered it: acknowledged (and open), or closed with a code. */
interface Opened {
  readonly socket: WebSocket;
  readonly outcome: { readonly acked: true } | { readonly acked: false; readonly code: number; readonly reason: string };
}

/**
 * One VIEWER session opening 600 graphql-ws connections (32 subscriptions on each it gets) against
 * the built API: past the per-session limit each is closed with 4431, past the user's with 4432,
 * past the process's with 4433, every refusal is counted, and the API process's RSS is back within
 * 50 MB of its start once the connections close.
 */
describe('graphql-ws connection limits', () => {
  let api: ApiProcess;
  const sockets: WebSocket[] = [];

  beforeAll(async () => {
    api = await startApiProcess({ env: { WS_CONNECTIONS_PER_SESSION: String(PER_SESSION), WS_CONNECTIONS_PER_USER: String(PER_USER), WS_CONNECTIONS_PER_PROCESS: String(PER_PROCESS) } });
    const admin = await api.login();
    for (const username of ['viewer', 'viewer2']) {
      const created = await api.gql(CreateUserDocument, { input: { username, password: VIEWER_PASSWORD, role: 'VIEWER' } }, admin);
      expect(created.errors).toBeUndefined();
    }
  });
  afterAll(async () => {
    sockets.forEach((socket) => socket.terminate());
    await api?.stop();
  });

  const wsUrl = () => `${api.url.replace(/^http/, 'ws')}/graphql`;

  const open = (token: string | null) =>
    new Promise<Opened>((resolve, reject) => {
      const socket = new WebSocket(wsUrl(), 'graphql-transport-ws');
      sockets.push(socket);
      socket.once('error', reject);
      socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: token ? { authorization: `Bearer ${token}` } : {} })));
      socket.on('message', (data) => {
        if ((JSON.parse(String(data)) as { type: string }).type === 'connection_ack') {
          resolve({ socket, outcome: { acked: true } });
        }
      });
      socket.once('close', (code, reason) => resolve({ socket, outcome: { acked: false, code, reason: String(reason) } }));
    });

  /** Starts SUBSCRIPTIONS subscriptions on an acknowledged connection. */
  const subscribe = (socket: WebSocket) => {
    for (let index = 0; index < SUBSCRIPTIONS; index++) {
      const clusterId = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
      socket.send(JSON.stringify({ id: `s${index}`, type: 'subscribe', payload: { query: 'subscription($c: ID!) { nodeChanged(clusterId: $c) { nodeId } }', variables: { c: clusterId } } }));
    }
  };

  const rssBytes = async () => {
    const status = await readFile(`/proc/${api.pid()}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) * 1024;
  };

  /** Waits for the server's count of open connections, which lags a client's close event. */
  const connectionsSettleAt = (count: number) =>
    expect.poll(async () => sampleValue(await scrape(api.url), 'ccos_websocket_connections'), { timeout: 10_000 }).toBe(count);

  const closeAll = async () => {
    const open = sockets.filter((socket) => socket.readyState !== WebSocket.CLOSED);
    await Promise.all(open.map((socket) => new Promise((done) => { socket.once('close', done); socket.close(1000); })));
    await connectionsSettleAt(0);
  };

  // A test that fails half-way must not leave its connections counted against the next one's limits.
  afterEach(async () => {
    await closeAll();
  });

  it('one session opening 600 connections gets 8; the rest are closed with 4431, counted, and RSS returns', async () => {
    const token = await api.login('viewer', VIEWER_PASSWORD);
    // Warm up the paths a connection takes before measuring where the process starts.
    const warm = await open(token);
    subscribe(warm.socket);
    await closeAll();
    const startRss = await rssBytes();

    const outcomes: Opened[] = [];
    // In waves, so that the process limit (40) is never what refuses them.
    for (let wave = 0; wave < 600; wave += 25) {
      const opened = await Promise.all(Array.from({ length: 25 }, () => open(token)));
      opened.filter(({ outcome }) => outcome.acked).forEach(({ socket }) => subscribe(socket));
      outcomes.push(...opened);
    }
    const acked = outcomes.filter(({ outcome }) => outcome.acked);
    const refused = outcomes.flatMap(({ outcome }) => (outcome.acked ? [] : [outcome]));
    expect(acked).toHaveLength(PER_SESSION);
    expect(refused).toHaveLength(600 - PER_SESSION);
    expect(new Set(refused.map(({ code }) => code))).toEqual(new Set([CLOSED_FOR_SESSION]));
    expect(refused[0]?.reason).toBe(`too many connections: at most ${PER_SESSION} per session`);
    // The connections it keeps still work.
    expect(acked.every(({ socket }) => socket.readyState === WebSocket.OPEN)).toBe(true);

    const metrics = await scrape(api.url);
    expect(sampleValue(metrics, 'ccos_websocket_refusals_total', { limit: 'session' })).toBe(600 - PER_SESSION);
    // A refused socket is counted until the server's side of its close handshake ends, which may be after the client's.
    await connectionsSettleAt(PER_SESSION);

    await closeAll();
    const endRss = await rssBytes();
    console.log(`websocket-limits: RSS ${(startRss / 2 ** 20).toFixed(1)} MiB at the start, ${(endRss / 2 ** 20).toFixed(1)} MiB after 600 connections closed`);
    expect(endRss - startRss).toBeLessThan(50 * 2 ** 20);
  }, 240_000);

  it('refuses a user past 32 connections over all sessions with 4432, and the process past 40 with 4433', async () => {
    const sessions = await Promise.all(Array.from({ length: PER_USER / PER_SESSION + 1 }, () => api.login('viewer', VIEWER_PASSWORD)));
    for (const token of sessions.slice(0, -1)) {
      const opened = await Promise.all(Array.from({ length: PER_SESSION }, () => open(token)));
      expect(opened.every(({ outcome }) => outcome.acked)).toBe(true);
    }
    const pastUser = await open(sessions.at(-1) ?? null);
    expect(pastUser.outcome).toEqual({ acked: false, code: CLOSED_FOR_USER, reason: `too many connections: at most ${PER_USER} per user` });

    // The refused one holds its process slot until the server's side of its close ends.
    await connectionsSettleAt(PER_USER);
    const other = await api.login('viewer2', VIEWER_PASSWORD);
    const opened = await Promise.all(Array.from({ length: PER_PROCESS - PER_USER }, () => open(other)));
    expect(opened.every(({ outcome }) => outcome.acked)).toBe(true);
    const pastProcess = await open(other);
    expect(pastProcess.outcome).toEqual({ acked: false, code: CLOSED_FOR_PROCESS, reason: `too many connections: this server holds at most ${PER_PROCESS}; retry later` });

    const metrics = await scrape(api.url);
    expect(sampleValue(metrics, 'ccos_websocket_refusals_total', { limit: 'user' })).toBe(1);
    expect(sampleValue(metrics, 'ccos_websocket_refusals_total', { limit: 'process' })).toBe(1);
  }, 120_000);
});
