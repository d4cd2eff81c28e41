import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, ClusterEntity, ClusterStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { ClusterAddressGuard, parseAddressPolicy } from '@ccos/api/data-access-kube';
import { AppError } from '@ccos/api/util-graphql';
import { SecretBox } from '@ccos/api/util-secrets';
import { ClusterService } from './cluster.service';
import type { RegisterClusterInput } from './register-cluster.input';

const TOKEN = 'cluster-token-that-must-stay-here-0123456789';

function kubeconfig(server: string, extra = ''): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: c',
    'contexts: [{ name: c, context: { cluster: k, user: u } }]',
    `clusters: [{ name: k, cluster: { server: "${server}"${extra} } }]`,
    `users: [{ name: u, user: { token: "${TOKEN}" } }]`,
  ].join('\n');
}

describe('ClusterService.register: where credentials may go', () => {
  let database: TestDatabase;
  let dataSource: Database;
  // Stands where a refused API server would be: it must never see a connection.
  let listener: Server;
  let port = 0;
  let counter = 0;
  /** Remote ports of every connection the listener accepted, in order. */
  const accepted: number[] = [];
  /** The test's own probe connections (local ports), not counted as the service's. */
  const probes = new Set<number>();
  let acceptedChanged = (): void => undefined;
  const connections = (): number => accepted.filter((remote) => !probes.has(remote)).length;
  /**
   * Resolves once the listener has accepted a probe connection of the test's own. The listener
   * accepts in order, so a connection attempt made before the probe has been accepted by then.
   */
  const probed = async (): Promise<void> => {
    const probe = connect({ port, host: '127.0.0.1' });
    await new Promise<void>((resolve, reject) => probe.once('connect', resolve).once('error', reject));
    const local = probe.localPort ?? 0;
    probes.add(local);
    await new Promise<void>((resolve) => {
      acceptedChanged = () => {
        if (accepted.includes(local)) {
          resolve();
        }
      };
      acceptedChanged();
    });
    probe.destroy();
  };

  beforeAll(async () => {
    database = await createTestDatabase('ccos_clusters');
    dataSource = await openDatabase({ url: database.url });
    listener = createServer((socket) => {
      accepted.push(socket.remotePort ?? 0);
      socket.destroy();
      acceptedChanged();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const address = listener.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });

  afterAll(async () => {
    listener?.close();
    await dataSource?.destroy();
    await database?.drop();
  });

  const service = (allow = '') => new ClusterService(new ClusterStore(dataSource), new SecretBox('cluster-service-spec-secret-key-0123456789'), () => undefined, new ClusterAddressGuard(parseAddressPolicy(allow)));
  const input = (overrides: Partial<RegisterClusterInput>): RegisterClusterInput => ({
    name: `c${++counter}`,
    apiServerUrl: 'https://10.20.30.40:6443',
    vip: '10.20.30.40',
    kubeconfig: null,
    token: TOKEN,
    caCert: null,
    csrAutoApprove: false,
    bootstrapStyle: 'OPENSHIFT',
    allowInsecureTransport: false,
    machineConfigCaCert: null,
    ...overrides,
  });
  const refusal = async (register: Promise<unknown>): Promise<AppError> => {
    const error = await register.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  };
  const stored = () => dataSource.getRepository(ClusterEntity).count();

  it.each([
    ['127.0.0.1', { apiServerUrl: 'https://127.0.0.1:PORT' }, /input\.apiServerUrl 127\.0\.0\.1 is a loopback address \(the service's own host\), where the service does not send cluster credentials; .*ALLOW_CLUSTER_ADDRESSES=loopback/],
    ['[::1]', { apiServerUrl: 'https://[::1]:PORT' }, /input\.apiServerUrl ::1 is a loopback address/],
    ['169.254.169.254', { apiServerUrl: 'https://169.254.169.254' }, /input\.apiServerUrl 169\.254\.169\.254 is a cloud metadata address/],
    ['fd00:ec2::254', { apiServerUrl: 'https://[fd00:ec2::254]' }, /input\.apiServerUrl fd00:ec2::254 is a cloud metadata address/],
    ['a link-local address', { apiServerUrl: 'https://169.254.3.4:6443' }, /input\.apiServerUrl 169\.254\.3\.4 is a link-local address/],
    ['a name resolving to loopback', { apiServerUrl: 'https://localhost:PORT' }, /input\.apiServerUrl host localhost resolves to (127\.0\.0\.1|::1) is a loopback address/],
    ['http:// without allowInsecureTransport', { apiServerUrl: 'http://10.20.30.40:8080' }, /input\.apiServerUrl uses http:\/\/, which would send the cluster credentials unencrypted; .*allowInsecureTransport: true/],
    [
      'insecure-skip-tls-verify without allowInsecureTransport',
      { token: null, kubeconfig: kubeconfig('https://10.20.30.40:6443', ', insecure-skip-tls-verify: true') },
      /input\.kubeconfig sets insecure-skip-tls-verify, so anyone on the network path could pose as the API server and receive the credentials; put the API server's CA into certificate-authority-data instead/,
    ],
    ['a kubeconfig with proxy-url', { token: null, kubeconfig: kubeconfig('https://10.20.30.40:6443', ', proxy-url: "http://127.0.0.1:3128"') }, /input\.kubeconfig sets proxy-url/],
  ])('refuses %s as BAD_USER_INPUT, storing and contacting nothing', async (_what, overrides, message) => {
    const before = { stored: await stored(), connections: connections() };
    const withPort = Object.fromEntries(Object.entries(overrides).map(([key, value]) => [key, typeof value === 'string' ? value.replace('PORT', String(port)) : value]));
    const error = await refusal(service().register(input(withPort)));
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain(TOKEN);
    expect(await stored()).toBe(before.stored);
    // Let an (unwanted) connection attempt arrive before counting: it would be accepted before the probe.
    await probed();
    expect(connections()).toBe(before.connections);
  });

  it('accepts each of them when told to: ALLOW_CLUSTER_ADDRESSES for addresses, allowInsecureTransport for transport', async () => {
    const loopback = service('loopback');
    expect((await loopback.register(input({ apiServerUrl: `https://127.0.0.1:${port}` }))).apiServerUrl).toBe(`https://127.0.0.1:${port}`);
    expect((await loopback.register(input({ apiServerUrl: `https://[::1]:${port}` }))).name).toMatch(/^c\d+$/);
    expect((await loopback.register(input({ apiServerUrl: `https://localhost:${port}` }))).name).toMatch(/^c\d+$/);
    expect((await service('169.254.169.254/32').register(input({ apiServerUrl: 'https://169.254.169.254' }))).name).toMatch(/^c\d+$/);
    // Allowing link-local ranges does not open the metadata endpoint in them.
    expect((await refusal(service('link-local').register(input({ apiServerUrl: 'https://169.254.169.254' })))).message).toMatch(/cloud metadata address/);
    const plain = await service().register(input({ apiServerUrl: 'http://10.20.30.40:8080', allowInsecureTransport: true }));
    expect(plain.allowInsecureTransport).toBe(true);
    const skipping = await service().register(input({ token: null, kubeconfig: kubeconfig('https://10.20.30.40:6443', ', insecure-skip-tls-verify: true'), allowInsecureTransport: true }));
    expect(skipping.allowInsecureTransport).toBe(true);
    // Not resolvable now: accepted, since every connection resolves and checks the name again.
    expect((await service().register(input({ apiServerUrl: 'https://api.cluster.invalid:6443' }))).name).toMatch(/^c\d+$/);
    const verified = await service().register(input({}));
    expect(verified.allowInsecureTransport).toBe(false);
    // The client built from a stored cluster applies the same rules.
    expect(service().clientOptionsOf(plain)).toMatchObject({ apiServerUrl: 'http://10.20.30.40:8080', allowInsecureTransport: true });
  });
});
