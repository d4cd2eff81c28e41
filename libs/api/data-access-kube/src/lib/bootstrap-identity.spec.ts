import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateRequest, startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { BOOTSTRAP_IDENTITIES_RBAC } from '../testing/shipped-rbac';
import { listBootstrapIdentities, mintBootstrapIdentity, parseServiceAccountUsername, revokeBootstrapIdentity } from './bootstrap-identity';
import { ClusterAddressGuard } from './cluster-address';
import { KubeApiError, createKubeClient, type KubeClient } from './kube-client';

const NAMESPACE = 'ccos-scaler-bootstrap';

describe('bootstrap identities (ServiceAccount + TokenRequest)', () => {
  let world: SimWithClient;
  let now = Date.parse('2026-12-01T10:00:00Z');

  beforeAll(async () => {
    world = await startSimWithClient({ seed: BOOTSTRAP_IDENTITIES_RBAC, serviceAccountTokens: { now: () => now } });
  });
  afterAll(async () => {
    await world?.stop();
  });

  /** A client that authenticates with nothing but the token, as a kubelet's bootstrap kubeconfig does. */
  const asToken = (token: string): KubeClient => createKubeClient({ addresses: ClusterAddressGuard.allowing('loopback'), apiServerUrl: world.sim.url, credentials: { kind: 'TOKEN', token, caCert: world.sim.caCertPem } });

  /** Files a kubelet client CSR with the token; returns who the API server says filed it. */
  const fileCsr = async (token: string): Promise<{ username?: string; uid?: string }> => {
    const client = asToken(token);
    try {
      const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:h1', organizations: ['system:nodes'] });
      const created = await client.call('create csr', (o) =>
        client.certificates.createCertificateSigningRequest(
          { body: { metadata: { generateName: 'csr-' }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } } },
          o,
        ),
      );
      return { username: created.spec.username, uid: created.spec.uid };
    } finally {
      client.close();
    }
  };

  it('mints an identity whose token files CSRs as its own account, with the run\'s deadline as expiry', async () => {
    const identity = await mintBootstrapIdentity(world.client, {
      namespace: NAMESPACE,
      name: 'run-1',
      labels: { 'ccos-scaler.io/install-run': 'run-1' },
      expiresAt: new Date(now + 45 * 60_000),
      now: new Date(now),
    });
    expect(identity).toMatchObject({ namespace: NAMESPACE, name: 'run-1', username: `system:serviceaccount:${NAMESPACE}:run-1`, expiresAt: new Date(now + 45 * 60_000) });
    expect(await fileCsr(identity.token)).toEqual({ username: identity.username, uid: identity.uid });
    expect(await listBootstrapIdentities(world.client, NAMESPACE, 'ccos-scaler.io/install-run')).toEqual([{ name: 'run-1', uid: identity.uid, labels: { 'ccos-scaler.io/install-run': 'run-1' } }]);
    expect(parseServiceAccountUsername(identity.username)).toEqual({ namespace: NAMESPACE, name: 'run-1' });
    expect(parseServiceAccountUsername('system:bootstrap:abcdef')).toBeNull();
  });

  it('asks for at least the API server\'s 10 minutes, and the token stops working when it expires', async () => {
    const identity = await mintBootstrapIdentity(world.client, { namespace: NAMESPACE, name: 'run-2', expiresAt: new Date(now + 60_000), now: new Date(now) });
    expect(identity.expiresAt).toEqual(new Date(now + 600_000));
    now += 600_000;
    await expect(fileCsr(identity.token)).rejects.toMatchObject({ statusCode: 401 });
  });

  it('revokes: the token is refused at once once the account is deleted; deleting again is no error', async () => {
    const identity = await mintBootstrapIdentity(world.client, { namespace: NAMESPACE, name: 'run-3', expiresAt: new Date(now + 3600_000), now: new Date(now) });
    expect((await fileCsr(identity.token)).username).toBe(identity.username);
    expect(await revokeBootstrapIdentity(world.client, identity)).toBe(true);
    await expect(fileCsr(identity.token)).rejects.toMatchObject({ statusCode: 401 });
    expect(await revokeBootstrapIdentity(world.client, identity)).toBe(false);
  });

  it('takes an account a previous attempt left, and never deletes one re-created under the name', async () => {
    const first = await mintBootstrapIdentity(world.client, { namespace: NAMESPACE, name: 'run-4', expiresAt: new Date(now + 3600_000), now: new Date(now) });
    const again = await mintBootstrapIdentity(world.client, { namespace: NAMESPACE, name: 'run-4', expiresAt: new Date(now + 3600_000), now: new Date(now) });
    expect(again.uid).toBe(first.uid);
    await revokeBootstrapIdentity(world.client, first);
    const recreated = await mintBootstrapIdentity(world.client, { namespace: NAMESPACE, name: 'run-4', expiresAt: new Date(now + 3600_000), now: new Date(now) });
    expect(await revokeBootstrapIdentity(world.client, first)).toBe(false);
    expect((await fileCsr(recreated.token)).uid).toBe(recreated.uid);
  });

  it('fails with the API\'s answer when the namespace does not exist', async () => {
    const error = await mintBootstrapIdentity(world.client, { namespace: 'nowhere', name: 'run-5', expiresAt: new Date(now + 3600_000) }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({ statusCode: 404, message: 'create serviceaccount nowhere/run-5: namespaces "nowhere" not found (404 NotFound)' });
  });
});
