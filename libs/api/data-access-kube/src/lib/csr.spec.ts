import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ccos/shared/util-timing/testing';
import { generateCertificateRequest, startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { ClusterAddressGuard } from './cluster-address';
import { listCsrs, watchCsrs, type CsrEvent } from './csr';
import { approveCsr, denyCsr } from './csr-approval';
import { createKubeClient, type KubeClient } from './kube-client';

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

describe('CSR list and watch', () => {
  let world: SimWithClient;
  let bootstrap: KubeClient;

  beforeAll(async () => {
    world = await startSimWithClient();
    const token = world.sim.createBootstrapToken({ id: 'abcdef', secret: '0123456789abcdef', extraGroups: ['system:bootstrappers:kubeadm:default-node-token'] });
    bootstrap = createKubeClient({ addresses: LOOPBACK, apiServerUrl: world.sim.url, credentials: { kind: 'TOKEN', token, caCert: world.sim.caCertPem } });
  });

  afterAll(async () => {
    bootstrap?.close();
    await world?.stop();
  });

  const create = async (client: KubeClient, name: string, signerName: string, csr: { commonName: string; dnsNames?: string[]; ipAddresses?: string[] }, usages: string[]) => {
    const { csrPem } = await generateCertificateRequest({ ...csr, organizations: ['system:nodes'] });
    return client.call('create csr', (o) =>
      client.certificates.createCertificateSigningRequest({ body: { metadata: { name }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName, usages } } }, o),
    );
  };

  it('lists CSRs with the requester the API server recorded and the parsed request', async () => {
    await create(bootstrap, 'node-csr-w1', CLIENT_SIGNER, { commonName: 'system:node:w1' }, ['digital signature', 'client auth']);
    const [csr] = await listCsrs(world.client);
    expect(csr).toMatchObject({
      name: 'node-csr-w1',
      signerName: CLIENT_SIGNER,
      username: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'],
      usages: ['digital signature', 'client auth'],
      expirationSeconds: null,
      state: 'Pending',
      conditions: [],
      request: { ok: true, request: { commonName: 'system:node:w1', organizations: ['system:nodes'], dnsNames: [], signatureValid: true } },
    });
  });

  it('watches: initial list, new CSRs, approval, signing, denial; a garbage request is reported, not thrown', async () => {
    const events: CsrEvent[] = [];
    const errors: Error[] = [];
    const watch = watchCsrs(world.client, (event) => events.push(event), { onError: (error) => errors.push(error) });
    try {
      await watch.synced;
      expect(events.map((e) => `${e.type} ${e.csr.name} ${e.csr.state}`)).toEqual(['ADDED node-csr-w1 Pending']);

      await create(world.client, 'serving-w1', SERVING_SIGNER, { commonName: 'system:node:w1', dnsNames: ['w1'], ipAddresses: ['198.18.0.11'] }, ['digital signature', 'server auth']);
      // The API refuses an unparsable request; stored directly it is what a broken or hostile client could leave behind.
      world.sim.api.seed(world.sim.resource('certificatesigningrequests'), {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'garbage' },
        spec: { request: Buffer.from('not a request').toString('base64'), signerName: CLIENT_SIGNER, usages: ['client auth'], username: 'mallory', groups: [] },
      });
      expect((await approveCsr(world.client, 'node-csr-w1')).ok).toBe(true);
      await world.sim.signingIdle();
      expect((await denyCsr(world.client, 'serving-w1', { reason: 'UnknownNode', message: 'w1 is not being installed' })).ok).toBe(true);

      await eventually(() => (events.some((e) => e.csr.name === 'serving-w1' && e.csr.state === 'Denied') ? true : undefined));
      const seen = events.slice(1).map((e) => `${e.type} ${e.csr.name} ${e.csr.state}`);
      expect(seen).toEqual([
        'ADDED serving-w1 Pending',
        'ADDED garbage Pending',
        'MODIFIED node-csr-w1 Approved',
        'MODIFIED node-csr-w1 Issued',
        'MODIFIED serving-w1 Denied',
      ]);
      expect(events.find((e) => e.csr.name === 'garbage')?.csr.request).toEqual({ ok: false, error: expect.stringMatching(/^not a PKCS#10 certificate request/) });
      expect(events.find((e) => e.csr.name === 'serving-w1')?.csr.request).toMatchObject({ ok: true, request: { dnsNames: ['w1'], ipAddresses: ['198.18.0.11'] } });
      expect(events.at(-1)?.csr.conditions).toEqual([{ type: 'Denied', status: 'True', reason: 'UnknownNode', message: 'w1 is not being installed', lastUpdateTime: expect.any(String) }]);
      expect(watch.csrs().map((c) => `${c.name} ${c.state}`)).toEqual(['garbage Pending', 'node-csr-w1 Issued', 'serving-w1 Denied']);

      await world.client.call('delete', (o) => world.client.certificates.deleteCertificateSigningRequest({ name: 'garbage' }, o));
      await eventually(() => (events.at(-1)?.type === 'DELETED' ? true : undefined));
      expect(events.at(-1)?.csr.name).toBe('garbage');
      expect(errors).toEqual([]);
    } finally {
      await watch.stop();
    }
  });
});
