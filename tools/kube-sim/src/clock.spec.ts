import { CertificatesV1Api, CoreV1Api, type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateRequest } from './certificate-request';
import { kubeTime } from './kube-object';
import { startKubeSim, type KubeSim } from './kube-sim';
import { kubeConfigFor, rawRequest } from './testing/kube-clients';
import { x509 } from './x509';

const BACKDATE_MS = 5 * 60 * 1000;

describe('kube-sim on an injected clock', () => {
  let sim: KubeSim;
  // Starts at the real time (TLS peers check certificates against it), on a whole second.
  let now = Math.floor(Date.now() / 1000) * 1000;

  beforeAll(async () => {
    sim = await startKubeSim({ clock: { now: () => now } });
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('stamps creation, approval and the issued certificate with the clock\'s time, not the machine\'s', async () => {
    const certificates = kubeConfigFor(sim).makeApiClient(CertificatesV1Api);
    now += 3 * 3600_000;
    const createdAt = now;
    const { csrPem } = await generateCertificateRequest({ commonName: 'system:node:h1', organizations: ['system:nodes'] });
    const body: V1CertificateSigningRequest = {
      metadata: { name: 'clocked' },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
    };
    const created = await certificates.createCertificateSigningRequest({ body });
    expect(created.metadata?.creationTimestamp?.getTime()).toBe(createdAt);

    now += 7000;
    const approvedAt = now;
    await certificates.replaceCertificateSigningRequestApproval({
      name: 'clocked',
      body: { ...created, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'approved by test' }] } },
    });
    await sim.signingIdle();
    const signed = await certificates.readCertificateSigningRequest({ name: 'clocked' });
    expect(signed.status?.conditions?.[0]).toMatchObject({ lastUpdateTime: new Date(approvedAt), lastTransitionTime: new Date(approvedAt) });
    const cert = new x509.X509Certificate(Buffer.from(signed.status?.certificate ?? '', 'base64'));
    expect(cert.notBefore.getTime()).toBe(approvedAt - BACKDATE_MS);
    expect(cert.notAfter.getTime()).toBe(approvedAt + 365 * 24 * 3600_000);
    expect(await sim.ca.verifies(cert)).toBe(true);
  });

  it('judges a bootstrap token\'s expiration and a TokenRequest token\'s expiry by the clock', async () => {
    const bootstrap = sim.createBootstrapToken({ expiration: new Date(now + 60_000) });
    sim.api.create(sim.resource('serviceaccounts'), 'default', { metadata: { name: 'robot' } }, { user: { username: 'kube-sim-admin', groups: ['system:masters'] } });
    const bound = sim.requestServiceAccountToken('default', 'robot', { expirationSeconds: 600 });
    const statusFor = async (token: string) => (await rawRequest(sim, { path: '/api/v1/namespaces/default', token })).status;
    // Both authenticate (403: known, but RBAC grants them nothing there).
    expect(await statusFor(bootstrap)).toBe(403);
    expect(await statusFor(bound)).toBe(403);
    now += 61_000;
    expect(await statusFor(bootstrap)).toBe(401);
    expect(await statusFor(bound)).toBe(403);
    now += 600_000;
    expect(await statusFor(bound)).toBe(401);
  });

  it('ages table rows by the clock', async () => {
    const core = kubeConfigFor(sim).makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'aged' } } });
    expect((await core.readNamespace({ name: 'aged' })).metadata?.creationTimestamp?.toISOString().replace('.000Z', 'Z')).toBe(kubeTime(now));
    now += 42 * 60_000;
    const answer = await rawRequest(sim, { path: '/api/v1/namespaces/aged', headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    const table = JSON.parse(answer.body) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    const age = table.columnDefinitions.findIndex((column) => column.name === 'Age');
    expect(table.rows[0].cells[age]).toBe('42m');
  });
});
