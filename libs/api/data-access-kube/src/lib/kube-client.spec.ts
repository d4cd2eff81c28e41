import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { createKubeClient, KubeApiError, KubeClientConfigError, type KubeClient } from './kube-client';

const SEED = `
apiVersion: v1
kind: Node
metadata: {name: w1, labels: {node-role.kubernetes.io/worker: ""}}
status: {conditions: [{type: Ready, status: "True"}]}
`;

async function failure(call: Promise<unknown>): Promise<KubeApiError> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KubeApiError);
  return error as KubeApiError;
}

describe('createKubeClient', () => {
  let world: SimWithClient;
  let silent: Server;
  let silentPort = 0;

  beforeAll(async () => {
    world = await startSimWithClient({ seed: SEED });
    // Accepts connections and never answers: a hung API server.
    silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    silentPort = typeof address === 'object' && address ? address.port : 0;
  });

  afterAll(async () => {
    await world?.stop();
    silent?.close();
  });

  const readW1 = (client: KubeClient) => client.call('read node w1', (options) => client.core.readNode({ name: 'w1' }, options));

  it('round-trips with a kubeconfig (client certificate) and with a bearer token plus CA', async () => {
    expect((await readW1(world.client)).metadata?.labels).toMatchObject({ 'node-role.kubernetes.io/worker': '' });
    const byToken = createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'TOKEN', token: world.sim.adminToken, caCert: world.sim.caCertPem } });
    try {
      const list = await byToken.call('list nodes', (options) => byToken.core.listNode({}, options));
      expect(list.items.map((node) => node.metadata?.name)).toEqual(['w1']);
    } finally {
      byToken.close();
    }
  });

  it('sends requests to the registered API server URL, not the kubeconfig server', async () => {
    const elsewhere = world.sim.kubeconfig.replace(world.sim.url, 'https://127.0.0.1:1');
    expect(elsewhere).not.toBe(world.sim.kubeconfig);
    const client = createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: elsewhere } });
    expect(client.server).toBe(world.sim.url);
    expect((await readW1(client)).metadata?.name).toBe('w1');
    client.close();
  });

  it('turns API errors into KubeApiError with status, reason and the API message', async () => {
    const error = await failure(world.client.call('read node nope', (options) => world.client.core.readNode({ name: 'nope' }, options)));
    expect(error).toMatchObject({ kind: 'status', statusCode: 404, reason: 'NotFound', operation: 'read node nope' });
    expect(error.message).toBe('read node nope: nodes "nope" not found (404 NotFound)');
    expect(error.cause).toBeDefined();
  });

  it('scrubs credentials the API quotes back from its answer (here a name shaped like a bootstrap token)', async () => {
    const name = 'abcdef.0123456789abcdef';
    const error = await failure(world.client.call(`read node ${name}`, (options) => world.client.core.readNode({ name }, options)));
    expect(error.statusCode).toBe(404);
    expect(error.message).toContain('nodes "[redacted]" not found');
    expect(error.status?.message).toBe('nodes "[redacted]" not found');
  });

  it('never puts the token into messages: wrong token (401), untrusted CA, unreachable server', async () => {
    const token = 'secret-token-that-must-not-leak-0123456789';
    const wrong = createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'TOKEN', token, caCert: world.sim.caCertPem } });
    const unauthorized = await failure(readW1(wrong));
    expect(unauthorized).toMatchObject({ kind: 'status', statusCode: 401 });
    const untrusted = createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'TOKEN', token, caCert: null } });
    const tls = await failure(readW1(untrusted));
    expect(tls.kind).toBe('network');
    const nowhere = createKubeClient({ apiServerUrl: 'https://127.0.0.1:1', credentials: { kind: 'TOKEN', token, caCert: null } });
    const refused = await failure(readW1(nowhere));
    expect(refused.message).toMatch(/cannot reach the API server at https:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)/);
    for (const error of [unauthorized, tls, refused]) {
      expect(error.message).not.toContain(token);
      expect(String(error.stack)).not.toContain(token);
    }
  });

  it('times requests out and honours an AbortSignal', async () => {
    const hung = createKubeClient({ apiServerUrl: `https://127.0.0.1:${silentPort}`, credentials: { kind: 'TOKEN', token: 'x'.repeat(20), caCert: null }, requestTimeoutMs: 300 });
    const started = Date.now();
    const timedOut = await failure(readW1(hung));
    expect(timedOut.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(3000);
    const controller = new AbortController();
    const pending = hung.call('read node w1', (options) => hung.core.readNode({ name: 'w1' }, options), controller.signal);
    controller.abort();
    expect((await failure(pending)).kind).toBe('aborted');
  });

  it('refuses unusable credentials without echoing them', () => {
    const secret = 'token: super-secret-value-1234567890';
    const bad = () => createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: `clusters: [\n  - ${secret}\n bad` } });
    expect(bad).toThrow(KubeClientConfigError);
    try {
      bad();
    } catch (error) {
      expect((error as Error).message).toMatch(/^the kubeconfig is not valid YAML \(line \d+, column \d+\)$/);
      expect(String((error as Error).cause)).not.toContain('super-secret');
    }
    const exec = world.sim.kubeconfig.replace(/users:[\s\S]*?contexts:/, 'users:\n  - name: kube-sim-admin\n    user:\n      exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}\ncontexts:');
    expect(() => createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: exec } })).toThrow(/exec or auth-provider plugin/);
    expect(() => createKubeClient({ apiServerUrl: 'http://127.0.0.1:8080', credentials: { kind: 'TOKEN', token: 't'.repeat(20), caCert: null } })).toThrow(/only sent over HTTPS/);
  });
});
