import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AGENT_TOKEN_PREFIX } from '@ccos/api/data-access-db';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { newOpaqueToken } from '@ccos/api/util-secrets';
import { AgentRunText, RegisterClusterDocument, ReportStepText } from '@ccos/shared/api-schema';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, freePort, startApiProcess } from '../support/api-process';
import { declaredMetrics } from '../support/metrics-text';
import { type HttpsAnswer, overHttps } from '../support/service-https';

interface Refusal {
  errors: Array<{ message: string; extensions: { code: string; messageCode: string } }>;
}

const KUBELET = Buffer.from('the stand-in kubelet of the default artifact set\n');

/**
 * The agents' listener (AGENT_PORT) and the metrics listener (METRICS_PORT) of the built API,
 * started as in the deployment: the agents' port serves an agent's reports, run state,
 * downloads, diagnostics and health with the main port's TLS, and 404 to everything else; the
 * main port no longer answers /metrics, which the metrics port serves.
 */
describe('the agents\' listener and the metrics listener of a running API', () => {
  let api: ApiProcess;
  let sim: KubeSim;
  let artifactsDir: string;
  let agentPort: number;
  let metricsPort: number;
  let agents: string;
  let ca: string;
  let adminToken: string;
  let agentToken: string;
  let runId: string;

  beforeAll(async () => {
    artifactsDir = await mkdtemp(join(tmpdir(), 'ccos-agent-listener-'));
    await mkdir(join(artifactsDir, 'binary'));
    await writeFile(join(artifactsDir, 'binary', 'kubelet'), KUBELET);
    agentPort = await freePort();
    metricsPort = await freePort();
    api = await startApiProcess({ env: { AGENT_PORT: String(agentPort), METRICS_PORT: String(metricsPort), ARTIFACTS_DIR: artifactsDir } });
    agents = `https://127.0.0.1:${agentPort}`;
    adminToken = await api.login();
    const channel = await api.gql<{ agentChannel: { caCertificate: string } }>('{ agentChannel { caCertificate } }', {}, adminToken);
    ca = channel.data?.agentChannel.caCertificate ?? '';

    // A cluster (agentRun asks it about the node), and a running install run there, as installNode
    // leaves it: its agent token ends with the run's deadline.
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    const registered = await api.gql(RegisterClusterDocument, { input: { name: 'agents', apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig: shippedIdentityKubeconfig(sim), csrAutoApprove: false } }, adminToken);
    const clusterId = registered.data?.registerCluster.id;
    const client = new pg.Client({ connectionString: api.database?.url });
    await client.connect();
    try {
      const nodeId = randomUUID();
      runId = randomUUID();
      const issued = newOpaqueToken(AGENT_TOKEN_PREFIX);
      agentToken = issued.token;
      await client.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, 'w1', '10.0.0.11', 'INSTALLING')`, [nodeId, clusterId]);
      await client.query(
        `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'admin', $3, now() + interval '2 hours', now() + interval '2 hours', now())`,
        [runId, nodeId, issued.hash],
      );
    } finally {
      await client.end();
    }
  });

  afterAll(async () => {
    await api?.stop();
    await sim?.stop();
    await rm(artifactsDir, { recursive: true, force: true });
  });

  const asAgent = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<HttpsAnswer> => {
    const answer = overHttps(`${agents}${path}`, { ca, method: init.method, headers: { authorization: `Bearer ${agentToken}`, ...init.headers }, body: init.body });
    return answer.then((reply) => {
      api.observe(typeof init.body === 'string' ? init.body : '', reply.body.toString('utf8'));
      return reply;
    });
  };
  const graphqlAsAgent = (query: string, variables: Record<string, unknown> = {}, operationName?: string) =>
    asAgent('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables, ...(operationName ? { operationName } : {}) }) });
  const stepEvent = (seq: number) => ({ runId, seq, step: 'PREFLIGHT', status: 'STARTED', occurredAt: new Date().toISOString() });

  it('serves the main port\'s certificate, from the service\'s CA (what agents pin)', async () => {
    const fingerprint = (port: number) =>
      new Promise<string>((resolve, reject) => {
        const socket = connectTls({ host: '127.0.0.1', port, ca, checkServerIdentity: () => undefined }, () => {
          resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
          socket.end();
        });
        socket.once('error', reject);
      });
    expect(ca).toContain('BEGIN CERTIFICATE');
    const [main, agentsPort] = await Promise.all([fingerprint(api.port), fingerprint(agentPort)]);
    expect(agentsPort).toMatch(/^[0-9A-F:]{95}$/);
    expect(agentsPort).toBe(main);
  });

  it('serves an agent\'s reportStep and agentRun, as the agent sends them', async () => {
    const reported = await graphqlAsAgent(ReportStepText.toString(), { input: stepEvent(1) }, 'ReportStep');
    expect(reported.status).toBe(200);
    expect(reported.json()).toEqual({ data: { reportStep: { accepted: true, duplicate: false, cancelRequested: false } } });
    const run = await graphqlAsAgent(AgentRunText.toString(), {}, 'AgentRun');
    expect(run.json<{ data: { agentRun: unknown } }>().data.agentRun).toMatchObject({ runId, nodeName: 'w1', nodeRegistered: false, pendingCsrNames: [], cancelRequested: false });
    // Spacing aside, it is the same document; the event is stored, as on the main port.
    const respaced = await graphqlAsAgent(ReportStepText.toString().replace(/\s+/g, '  '), { input: stepEvent(2) });
    expect(respaced.json<{ data: unknown }>().data).toEqual({ reportStep: { accepted: true, duplicate: false, cancelRequested: false } });
    const events = await api.gql<{ installRun: { events: Array<{ seq: number }> } }>('query($id: ID!) { installRun(id: $id) { events { seq } } }', { id: runId }, adminToken);
    expect(events.data?.installRun.events.map((event) => event.seq)).toEqual([1, 2]);
  });

  it('serves the artifact manifest and downloads (with ranges), the diagnostics upload and /healthz', async () => {
    const manifest = await asAgent('/artifacts/manifest');
    expect(manifest.status).toBe(200);
    expect(manifest.json<{ artifacts: Array<{ kind: string; name: string; size: number }> }>().artifacts).toEqual([expect.objectContaining({ kind: 'binary', name: 'kubelet', size: KUBELET.length })]);
    const kubelet = await asAgent('/artifacts/binary/kubelet');
    expect(kubelet.status).toBe(200);
    expect(kubelet.body).toEqual(KUBELET);
    const resumed = await asAgent('/artifacts/binary/kubelet', { headers: { range: 'bytes=4-' } });
    expect([resumed.status, resumed.body]).toEqual([206, KUBELET.subarray(4)]);
    expect((await asAgent('/healthz')).json()).toEqual({ status: 'ok' });
    // The diagnostics route answers (here: its own refusal of a token it does not know), not the listener's 404.
    const upload = await overHttps(`${agents}/agent/diagnostics`, { ca, method: 'POST', headers: { authorization: 'Bearer agt_unknown', 'content-type': 'application/gzip' }, body: Buffer.from([0x1f, 0x8b]) });
    expect([upload.status, upload.json<{ error: string }>().error]).toEqual([401, 'a valid agent token is required']);
  });

  it('answers 404 to any other GraphQL operation, introspection included, and stores nothing', async () => {
    const refusals = [
      await graphqlAsAgent('{ clusters { id name } }'),
      await graphqlAsAgent('mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }', { u: 'admin', p: 'guess' }),
      await graphqlAsAgent('{ __schema { types { name } } }'),
      await graphqlAsAgent('query AgentRun { __type(name: "Query") { fields { name } } }'),
      // The agent's own operations, changed: another field, an alias, another operation name, two documents in one.
      await graphqlAsAgent(AgentRunText.toString().replace('runId', 'runId __typename')),
      await graphqlAsAgent(ReportStepText.toString().replace('reportStep(', 'again: reportStep('), { input: stepEvent(3) }),
      await graphqlAsAgent(ReportStepText.toString(), { input: stepEvent(4) }, 'AgentRun'),
      await graphqlAsAgent(`${ReportStepText.toString()}\n${AgentRunText.toString()}`, { input: stepEvent(5) }, 'ReportStep'),
      await asAgent('/graphql?query=%7B__typename%7D', { headers: { accept: 'application/json' } }),
      await asAgent('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ query: ReportStepText.toString(), variables: { input: stepEvent(6) } }]) }),
    ];
    expect(refusals.map((answer) => answer.status)).toEqual(Array(refusals.length).fill(404));
    const named = refusals.slice(0, 8).map((answer) => answer.json<Refusal>().errors[0]);
    expect(new Set(named.map((error) => `${error?.extensions.code} ${error?.extensions.messageCode}`))).toEqual(new Set(['NOT_FOUND agentListener.operationNotServed']));
    expect(named[0]?.message).toMatch(/^this port serves only the install agent's GraphQL operations \((?=[^)]*\bAgentRun\b)(?=[^)]*\bReportStep\b)[\w, ]+\); send any other operation to the service's main port$/);
    const events = await api.gql<{ installRun: { events: Array<{ seq: number }> } }>('query($id: ID!) { installRun(id: $id) { events { seq } } }', { id: runId }, adminToken);
    expect(events.data?.installRun.events.map((event) => event.seq)).toEqual([1, 2]);
  });

  it('answers 404 to /metrics, the console, GraphiQL, the artifact upload, the operators\' diagnostics download and anything else', async () => {
    const paths: Array<[string, string]> = [
      ['GET', '/metrics'],
      ['GET', '/'],
      ['GET', '/nodes'],
      ['GET', '/index.html'],
      ['GET', '/graphql/ide/index.js'],
      ['POST', '/admin/artifact-sets'],
      ['GET', `/api/install-runs/${runId}/diagnostics.tar.gz`],
      ['GET', '/readyz'],
      ['GET', '/HEALTHZ'],
      ['GET', '/artifacts/binary/kubelet/extra'],
    ];
    const answers = await Promise.all(paths.map(([method, path]) => asAgent(path, { method, headers: { accept: 'text/html' } })));
    expect(answers.map((answer, index) => `${paths[index]?.join(' ')} ${answer.status}`)).toEqual(paths.map(([method, path]) => `${method} ${path} 404`));
    expect(answers[0]?.json<Refusal>().errors[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', messageCode: 'agentListener.notFound' });
    expect(answers[0]?.body.toString()).not.toContain('ccos_');
  });

  it('opens no WebSocket, takes no session token, and keeps the agent token off plain HTTP', async () => {
    const upgrade = await new Promise<number>((resolve) => {
      // The certificate is the first test's matter; here only the answer to the upgrade counts.
      const socket = new WebSocket(`wss://127.0.0.1:${agentPort}/graphql`, 'graphql-transport-ws', { rejectUnauthorized: false });
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('open', () => resolve(101));
      socket.once('error', () => resolve(-1));
    });
    expect(upgrade).toBe(404);
    const withSession = await overHttps(`${agents}/artifacts/manifest`, { ca, headers: { authorization: `Bearer ${adminToken}` } });
    expect(withSession.status).toBe(401);
    expect(withSession.json<Refusal>().errors[0]?.extensions.messageCode).toBe('agentListener.agentTokensOnly');
    const plain = await fetch(`http://127.0.0.1:${agentPort}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agentToken}` },
      body: JSON.stringify({ query: ReportStepText.toString(), variables: { input: stepEvent(7) } }),
    });
    expect(plain.status).toBe(403);
    expect(((await plain.json()) as Refusal).errors[0]?.extensions.code).toBe('HTTPS_REQUIRED');
  });

  it('serves /metrics on the metrics port only: the main port answers 404 to it, the metrics port nothing else', async () => {
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).toBe(200);
    expect(declaredMetrics(await scraped.text()).get('ccos_http_requests_total')).toBe('counter');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/graphql`, { method: 'POST' })).status).toBe(404);
    const onMain = await fetch(`${api.url}/metrics`);
    expect(onMain.status).toBe(404);
    expect(await onMain.text()).not.toContain('ccos_');
    // The main port still serves people.
    expect((await api.gql<{ me: { username: string } }>('{ me { username } }', {}, adminToken)).data?.me.username).toBe('admin');
  });
});
