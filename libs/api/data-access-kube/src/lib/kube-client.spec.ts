import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeSim, startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { ClusterAddressGuard, parseAddressPolicy } from './cluster-address';
import { createKubeClient, KubeApiError, KubeClientConfigError, type KubeClient } from './kube-client';

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

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
    const byToken = createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'TOKEN', token: world.sim.adminToken, caCert: world.sim.caCertPem } });
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
    const client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: elsewhere } });
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
    const wrong = createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'TOKEN', token, caCert: world.sim.caCertPem } });
    const unauthorized = await failure(readW1(wrong));
    expect(unauthorized).toMatchObject({ kind: 'status', statusCode: 401 });
    const untrusted = createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'TOKEN', token, caCert: null } });
    const tls = await failure(readW1(untrusted));
    expect(tls.kind).toBe('network');
    const nowhere = createKubeClient({ addresses: LOOPBACK, apiServerUrl: 'https://127.0.0.1:1', credentials: { kind: 'TOKEN', token, caCert: null } });
    const refused = await failure(readW1(nowhere));
    expect(refused.message).toMatch(/cannot reach the API server at https:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)/);
    for (const error of [unauthorized, tls, refused]) {
      expect(error.message).not.toContain(token);
      expect(String(error.stack)).not.toContain(token);
    }
  });

  it('times requests out and honours an AbortSignal', async () => {
    const hung = createKubeClient({ addresses: LOOPBACK, apiServerUrl: `https://127.0.0.1:${silentPort}`, credentials: { kind: 'TOKEN', token: 'x'.repeat(20), caCert: null }, requestTimeoutMs: 300 });
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
    const bad = () => createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: `clusters: [\n  - ${secret}\n bad` } });
    expect(bad).toThrow(KubeClientConfigError);
    try {
      bad();
    } catch (error) {
      expect((error as Error).message).toMatch(/^the kubeconfig is not valid YAML \(line \d+, column \d+\)$/);
      expect(String((error as Error).cause)).not.toContain('super-secret');
    }
    const exec = world.sim.kubeconfig.replace(/users:[\s\S]*?contexts:/, 'users:\n  - name: kube-sim-admin\n    user:\n      exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}\ncontexts:');
    expect(() => createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: exec } })).toThrow(/exec or auth-provider plugin/);
    expect(() => createKubeClient({ addresses: LOOPBACK, apiServerUrl: 'http://127.0.0.1:8080', credentials: { kind: 'TOKEN', token: 't'.repeat(20), caCert: null } })).toThrow(/uses http:\/\/, which sends the cluster credentials unencrypted/);
  });
});

describe('createKubeClient: transport and addresses', () => {
  let world: SimWithClient;
  let counting: Server;
  let countingPort = 0;
  let connections = 0;

  beforeAll(async () => {
    world = await startSimWithClient({ seed: SEED });
    // Counts connection attempts: a refused address must not even be connected to.
    counting = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => counting.listen(0, '127.0.0.1', resolve));
    const address = counting.address();
    countingPort = typeof address === 'object' && address ? address.port : 0;
  });

  afterAll(async () => {
    await world?.stop();
    counting?.close();
  });

  const readW1 = (client: KubeClient) => client.call('read node w1', (options) => client.core.readNode({ name: 'w1' }, options));
  const token = { kind: 'TOKEN' as const, token: 'token-for-a-refused-address-0123456789', caCert: null };

  it.each([
    ['127.0.0.1', 'https://127.0.0.1:6443', /127\.0\.0\.1 is a loopback address/],
    ['[::1]', 'https://[::1]:6443', /::1 is a loopback address/],
    ['an IPv4-mapped loopback address', 'https://[::ffff:127.0.0.1]:6443', /::ffff:7f00:1 is a loopback address/],
    ['a numeric form of 127.0.0.1', 'https://2130706433:6443', /127\.0\.0\.1 is a loopback address/],
    ['169.254.169.254', 'https://169.254.169.254', /169\.254\.169\.254 is a cloud metadata address/],
    ['fd00:ec2::254', 'https://[fd00:ec2::254]', /fd00:ec2::254 is a cloud metadata address/],
    ['100.100.100.200', 'https://100.100.100.200', /is a cloud metadata address/],
    ['a link-local address', 'https://169.254.10.1:6443', /169\.254\.10\.1 is a link-local address/],
    ['0.0.0.0', 'https://0.0.0.0:6443', /0\.0\.0\.0 is a loopback address/],
  ])('refuses %s as the API server unless the range is allowed', (_what, url, reason) => {
    expect(() => createKubeClient({ apiServerUrl: url, credentials: token })).toThrow(reason);
    expect(() => createKubeClient({ apiServerUrl: url, credentials: token })).toThrow(/ALLOW_CLUSTER_ADDRESSES=/);
  });

  it('allows a refused range only when told, and metadata addresses only by name or network', () => {
    expect(() => createKubeClient({ apiServerUrl: 'https://127.0.0.1:6443', credentials: token, addresses: LOOPBACK }).close()).not.toThrow();
    expect(() => createKubeClient({ apiServerUrl: 'https://169.254.169.254', credentials: token, addresses: ClusterAddressGuard.allowing('link-local') })).toThrow(/metadata/);
    expect(() => createKubeClient({ apiServerUrl: 'https://169.254.169.254', credentials: token, addresses: new ClusterAddressGuard(parseAddressPolicy('169.254.169.254/32')) }).close()).not.toThrow();
    expect(() => createKubeClient({ apiServerUrl: 'https://10.0.0.5:6443', credentials: token }).close()).not.toThrow();
    expect(() => parseAddressPolicy('loopback, 10.0.0.0/33')).toThrow(/"10\.0\.0\.0\/33" is neither loopback, link-local, metadata nor a network/);
  });

  it('checks the addresses a name resolves to on every connection: localhost is never connected to', async () => {
    const before = connections;
    const client = createKubeClient({ apiServerUrl: `https://localhost:${countingPort}`, credentials: token });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await failure(readW1(client));
        expect(error.kind).toBe('network');
        expect(error.message).toMatch(/not connecting to the API server at https:\/\/localhost:\d+: localhost resolves to (127\.0\.0\.1|::1) is a loopback address/);
        expect(error.message).not.toContain(token.token);
      }
      // A watch goes through the same check.
      await expect(client.watch('/api/v1/nodes', {}, () => undefined, new AbortController().signal)).rejects.toThrow(/localhost resolves to/);
    } finally {
      client.close();
    }
    expect(connections).toBe(before);
    const allowed = createKubeClient({ apiServerUrl: world.sim.url.replace('127.0.0.1', 'localhost'), credentials: { kind: 'KUBECONFIG', kubeconfig: world.sim.kubeconfig }, addresses: LOOPBACK });
    try {
      expect((await readW1(allowed)).metadata?.name).toBe('w1');
    } finally {
      allowed.close();
    }
  });

  it('refuses insecure-skip-tls-verify and http:// unless the cluster allows insecure transport', async () => {
    const skipping = world.sim.kubeconfig.replace(/certificate-authority-data: \S+/, 'insecure-skip-tls-verify: true');
    expect(skipping).not.toBe(world.sim.kubeconfig);
    expect(() => createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: skipping }, addresses: LOOPBACK })).toThrow(
      /sets insecure-skip-tls-verify, so anyone on the network path could pose as the API server/,
    );
    const unverified = createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: skipping }, addresses: LOOPBACK, allowInsecureTransport: true });
    try {
      expect((await readW1(unverified)).metadata?.name).toBe('w1');
    } finally {
      unverified.close();
    }
    const proxied = world.sim.kubeconfig.replace(/server: (\S+)/, 'server: $1\n      proxy-url: http://198.18.0.9:3128');
    expect(() => createKubeClient({ apiServerUrl: world.sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: proxied }, addresses: LOOPBACK })).toThrow(/sets proxy-url, which the service does not use/);

    const plain = await startKubeSim({ seed: SEED, insecureHttp: true, adminToken: 'plain-http-admin-token-0123456789' });
    try {
      expect(plain.url).toMatch(/^http:\/\//);
      const credentials = { kind: 'TOKEN' as const, token: 'plain-http-admin-token-0123456789', caCert: null };
      expect(() => createKubeClient({ apiServerUrl: plain.url, credentials, addresses: LOOPBACK })).toThrow(/uses http:\/\//);
      const insecure = createKubeClient({ apiServerUrl: plain.url, credentials, addresses: LOOPBACK, allowInsecureTransport: true });
      try {
        expect((await readW1(insecure)).metadata?.name).toBe('w1');
      } finally {
        insecure.close();
      }
    } finally {
      await plain.stop();
    }
  });

  it('never echoes the body of an error answer: the message is a bounded excerpt without tokens or keys', async () => {
    const secretish = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06YWRtaW4ifQ.c2lnbmF0dXJl';
    const server = createHttpServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          code: 500,
          reason: 'InternalError',
          message: `upstream said: Authorization: Bearer ${secretish} -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY----- ${'x'.repeat(20_000)}`,
          details: { causes: Array.from({ length: 500 }, () => ({ message: 'y'.repeat(1000) })) },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const client = createKubeClient({ apiServerUrl: `http://127.0.0.1:${port}`, credentials: token, addresses: LOOPBACK, allowInsecureTransport: true });
    try {
      const error = await failure(readW1(client));
      expect(error).toMatchObject({ kind: 'status', statusCode: 500 });
      expect(error.message.length).toBeLessThan(500);
      expect(error.message).toMatch(/^read node w1: upstream said: Authorization: Bearer \[redacted\] -----BEGIN PRIVATE KEY-----\[redacted\]-----END PRIVATE KEY----- x+…/);
      const everything = JSON.stringify({ message: error.message, status: error.status, cause: String(error.cause), stack: error.stack });
      expect(everything).not.toContain(secretish);
      expect(everything).not.toContain('MIIEvQIBADANBg');
      expect(everything.length).toBeLessThan(20_000);
      expect(error.status?.details?.causes).toHaveLength(20);
    } finally {
      client.close();
      server.close();
    }
  });
});

