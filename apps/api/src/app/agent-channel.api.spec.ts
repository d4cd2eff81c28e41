import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AgentTokens } from '@ccos/api/data-access-db';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { formatServerText } from '@ccos/shared/messages';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';
import { loadConfig } from './config';

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A request over TLS that trusts only the service's CA, as the agent does. */
function overTls(url: string | null, ca: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: init.method ?? 'GET', headers: init.headers, ca, agent: false, checkServerIdentity: () => undefined }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const overPlain = async (url: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> => {
  const response = await fetch(`${url}${path}`, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
  return { status: response.status, body: await response.text() };
};

const AGENT_RUN = JSON.stringify({ query: '{ agentRun { runId } }' });

describe('the agent channel: HTTPS and plain HTTP on one port', () => {
  let sim: KubeSim;
  let artifactsDir: string;

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    artifactsDir = await mkdtemp(join(tmpdir(), 'ccos-artifacts-'));
    await mkdir(join(artifactsDir, 'binary'));
    await writeFile(join(artifactsDir, 'binary', 'kubelet'), 'kubelet bytes');
  });
  afterAll(async () => {
    await sim?.stop();
    await rm(artifactsDir, { recursive: true, force: true });
  });

  /** An install run with a real agent token, as installNode makes one. */
  const agentToken = async (harness: ApiHarness): Promise<{ token: string; runId: string }> => {
    const clusterId = await harness.registerSimCluster(sim);
    const db = harness.api.dataSource;
    const nodeId = randomUUID();
    const runId = randomUUID();
    const { token, hash } = new AgentTokens(db).issue();
    await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, 'w1', '198.18.0.11', 'INSTALLING')`, [nodeId, clusterId]);
    await db.query(`INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, agent_channel, agent_token_expires_at, deadline_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $3, 'HTTPS', now() + interval '2 hours', now() + interval '2 hours', now())`, [runId, nodeId, hash]);
    return { token, runId };
  };

  describe('by default (agents on HTTPS only)', () => {
    let harness: ApiHarness;
    let ca: string;
    let agent: { token: string; runId: string };

    beforeAll(async () => {
      harness = await startApiHarness({ ARTIFACTS_DIR: artifactsDir });
      ca = harness.api.tls.caCertificates() ?? '';
      agent = await agentToken(harness);
    });
    afterAll(async () => {
      await harness?.stop();
    });

    it('answers the agent over TLS with a certificate from the service CA', async () => {
      const headers = { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' };
      const run = await overTls(harness.api.httpsUrl, ca, '/graphql', { method: 'POST', headers, body: AGENT_RUN });
      expect(JSON.parse(run.body)).toEqual({ data: { agentRun: { runId: agent.runId } } });
      const manifest = await overTls(harness.api.httpsUrl, ca, '/artifacts/manifest', { headers });
      expect(manifest.status).toBe(200);
      expect(JSON.parse(manifest.body).artifacts).toEqual([expect.objectContaining({ name: 'kubelet' })]);
    });

    it('refuses the artifacts without a valid agent token, by code beside the English error', async () => {
      const refused = await overTls(harness.api.httpsUrl, ca, '/artifacts/manifest', { headers: { authorization: 'Bearer not-a-token' } });
      expect(refused.status).toBe(401);
      const body = JSON.parse(refused.body);
      expect(body).toEqual({ error: 'a valid agent token is required to download artifacts', messageCode: 'artifacts.agentTokenRequired', messageParams: {} });
      expect(formatServerText('zh-CN', body.messageCode, body.messageParams, null)).toBe('下载制品需要有效的 agent 令牌');
    });

    it.each([
      ['reportStep/agentRun (GraphQL)', 'POST', '/graphql', AGENT_RUN],
      ['the artifact manifest', 'GET', '/artifacts/manifest', undefined],
      ['an artifact', 'GET', '/artifacts/binary/kubelet', undefined],
      ['a diagnostics upload', 'POST', '/agent/diagnostics', 'gzip bytes'],
    ])('refuses an agent token on plain HTTP for %s, and nothing happens', async (_name, method, path, body) => {
      const answer = await overPlain(harness.url, path, {
        method,
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': path === '/graphql' ? 'application/json' : 'application/gzip' },
        body,
      });
      expect(answer.status).toBe(403);
      const refusal = JSON.parse(answer.body);
      expect(refusal).toEqual({
        errors: [{
          message: 'agent tokens are accepted over HTTPS only; plain HTTP for agents needs AGENT_PLAIN_HTTP=allow on the service',
          extensions: { code: 'HTTPS_REQUIRED', messageCode: 'agentToken.httpsOnly', messageParams: {} },
        }],
      });
      expect(formatServerText('zh-CN', refusal.errors[0].extensions.messageCode, refusal.errors[0].extensions.messageParams, null)).toBe(
        '代理令牌只能通过 HTTPS 发送；要让代理使用明文 HTTP，需在服务上设置 AGENT_PLAIN_HTTP=allow',
      );
      const stored = await harness.api.dataSource.query('SELECT count(*)::int AS n FROM install_diagnostics WHERE run_id = $1', [agent.runId]);
      expect(stored[0].n).toBe(0);
      expect(harness.logs.join('\n')).not.toContain(agent.token);
    });

    it('keeps people on plain http://localhost working: health, sign-in, queries, subscriptions', async () => {
      expect((await overPlain(harness.url, '/healthz')).status).toBe(200);
      const admin = await harness.tokenFor('ADMIN');
      const settings = await harness.gql<{ agentChannel: { plainHttpAllowed: boolean; certificateSource: string; caCertificate: string } }>(
        '{ agentChannel { plainHttpAllowed certificateSource caCertificate } }', {}, admin,
      );
      expect(settings.data?.agentChannel).toEqual({ plainHttpAllowed: false, certificateSource: 'GENERATED', caCertificate: ca });
      const client = createClient({ url: `${harness.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${admin}` }, retryAttempts: 0 });
      try {
        const connected = new Promise<boolean>((resolve) => {
          client.on('connected', () => resolve(true));
          client.on('closed', () => resolve(false));
        });
        const unsubscribe = client.subscribe({ query: 'subscription($c: ID!) { nodeChanged(clusterId: $c) { id } }', variables: { c: randomUUID() } }, { next: () => undefined, error: () => undefined, complete: () => undefined });
        expect(await connected).toBe(true);
        unsubscribe();
      } finally {
        await client.dispose();
      }
    });

    it('carries subscriptions over wss:// on the same port', async () => {
      const admin = await harness.tokenFor('ADMIN');
      const connected = await new Promise<boolean>((resolve) => {
        const socket = new WebSocket(`${String(harness.api.httpsUrl).replace('https', 'wss')}/graphql`, 'graphql-transport-ws', { ca });
        socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${admin}` } })));
        socket.on('message', (data: Buffer) => {
          resolve(JSON.parse(data.toString()).type === 'connection_ack');
          socket.close();
        });
        socket.on('error', () => resolve(false));
      });
      expect(connected).toBe(true);
    });

    it('records HTTPS on an install run and exposes it', async () => {
      const viewer = await harness.tokenFor('VIEWER');
      const run = await harness.gql<{ installRun: { agentChannel: string } }>('query($id: ID!) { installRun(id: $id) { agentChannel } }', { id: agent.runId }, viewer);
      expect(run.data?.installRun.agentChannel).toBe('HTTPS');
    });
  });

  describe('with AGENT_PLAIN_HTTP=allow', () => {
    let harness: ApiHarness;

    beforeAll(async () => {
      harness = await startApiHarness({ ARTIFACTS_DIR: artifactsDir, AGENT_PLAIN_HTTP: 'allow', AGENT_API_URL: 'http://198.18.0.1:4000' });
    });
    afterAll(async () => {
      await harness?.stop();
    });

    it('accepts agent tokens on plain HTTP, and says so: a warning in the log and in the settings the console reads', async () => {
      const agent = await agentToken(harness);
      const answer = await overPlain(harness.url, '/graphql', { method: 'POST', headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' }, body: AGENT_RUN });
      expect(JSON.parse(answer.body)).toEqual({ data: { agentRun: { runId: agent.runId } } });
      expect(harness.logs.some((line) => line.includes('AGENT_PLAIN_HTTP=allow') && line.includes('"level":40'))).toBe(true);
      const settings = await harness.gql<{ agentChannel: { plainHttpAllowed: boolean } }>('{ agentChannel { plainHttpAllowed } }', {}, await harness.tokenFor('VIEWER'));
      expect(settings.data?.agentChannel.plainHttpAllowed).toBe(true);
    });
  });

  it('refuses to start with a plain AGENT_API_URL unless plain HTTP is allowed, saying why', async () => {
    const env = { DATA_DIR: join(artifactsDir, 'config-only') };
    await expect(loadConfig({ ...env, AGENT_API_URL: 'http://198.18.0.1:4000' })).rejects.toThrow(
      /AGENT_API_URL=http:\/\/198\.18\.0\.1:4000 is plain HTTP: .* Use https:\/\/ .*or set AGENT_PLAIN_HTTP=allow/,
    );
    await expect(loadConfig({ ...env, AGENT_API_URL: 'https://198.18.0.1:4000' })).resolves.toMatchObject({ agentApiUrl: 'https://198.18.0.1:4000', agentPlainHttp: false });
    await expect(loadConfig({ ...env, AGENT_PLAIN_HTTP: 'yes' })).rejects.toThrow('AGENT_PLAIN_HTTP=yes is not "allow" or "refuse"');
    await expect(loadConfig({ ...env, TLS_CERT_FILE: '/etc/tls.crt' })).rejects.toThrow('TLS_CERT_FILE and TLS_KEY_FILE go together (TLS_KEY_FILE is missing)');
    await expect(loadConfig({ ...env, TLS_CA_FILE: '/etc/ca.crt' })).rejects.toThrow(/TLS_CA_FILE names the CA of TLS_CERT_FILE/);
  });
});
