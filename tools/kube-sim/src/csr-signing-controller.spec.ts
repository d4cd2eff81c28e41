import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CertificatesV1Api, CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, V1MicroTime, type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertificateAuthority } from './certificate-authority';
import { generateCertificateRequest } from './certificate-request';
import { startKubeSim, type KubeSim } from './kube-sim';
import { apiFailure, eventually, kubeConfigFor, rawRequest } from './testing/kube-clients';
import { x509 } from './x509';

const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';

async function csrBody(name: string, signerName: string, request: { commonName: string; organizations?: string[]; dnsNames?: string[]; ipAddresses?: string[] }, usages: string[]) {
  const { csrPem, keyPem } = await generateCertificateRequest(request);
  const body: V1CertificateSigningRequest = {
    metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName, usages, username: 'forged', groups: ['system:masters'] },
  };
  return { body, keyPem };
}

function approved(csr: V1CertificateSigningRequest, type: 'Approved' | 'Denied' = 'Approved'): V1CertificateSigningRequest {
  const condition = { type, status: 'True', reason: 'Test', message: `${type} by test`, lastUpdateTime: new Date() };
  return { ...csr, status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []), condition] } };
}

describe('authentication, CSRs and the signer (kubelet TLS bootstrap)', () => {
  let sim: KubeSim;
  let dir: string;
  let admin: CertificatesV1Api;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-sim-auth-'));
    const tokenFile = join(dir, 'tokens.csv');
    await writeFile(tokenFile, 'static-token-1,ops-alice,uid-42,"ops,system:nodes-admins"\n');
    // The ops group may create CSRs, as a ClusterRoleBinding to system:node-bootstrapper grants.
    const seed = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ops-csr-creators}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:node-bootstrapper}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: ops}]`;
    sim = await startKubeSim({ tokenAuthFile: tokenFile, stateDir: join(dir, 'state'), seed });
    admin = kubeConfigFor(sim).makeApiClient(CertificatesV1Api);
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('rejects anonymous and unknown credentials with a 401 Status, but serves /version', async () => {
    const anonymous = await rawRequest(sim, { path: '/api/v1/nodes', anonymous: true });
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body)).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    expect((await rawRequest(sim, { path: '/api/v1/nodes', token: 'nope' })).status).toBe(401);
    expect((await rawRequest(sim, { path: '/api/v1/nodes', token: sim.adminToken })).status).toBe(200);
    expect((await rawRequest(sim, { path: '/version', anonymous: true })).status).toBe(200);
    const foreign = await (await CertificateAuthority.create('other-ca')).issueKeyPair('CN=kube-sim-admin, O=system:masters', { client: true });
    expect((await rawRequest(sim, { path: '/api/v1/nodes', cert: foreign })).status).toBe(401);
  });

  it('writes the static-token caller into spec.username/uid/groups, never the body', async () => {
    const ops = kubeConfigFor(sim, { token: 'static-token-1' }).makeApiClient(CertificatesV1Api);
    const { body } = await csrBody('ops-csr', 'kubernetes.io/kube-apiserver-client', { commonName: 'alice' }, ['digital signature', 'client auth']);
    const created = await ops.createCertificateSigningRequest({ body });
    expect(created.spec).toMatchObject({ username: 'ops-alice', uid: 'uid-42', groups: ['ops', 'system:nodes-admins', 'system:authenticated'] });
  });

  it('bootstraps a kubelet: bootstrap token → client CSR → approval → certificate → Node → serving CSR → heartbeats', async () => {
    const token = sim.createBootstrapToken({ extraGroups: ['system:bootstrappers:kubeadm:default-node-token'] });
    const tokenId = token.split('.')[0];
    const bootstrap = kubeConfigFor(sim, { token }).makeApiClient(CertificatesV1Api);
    const client = await csrBody('node-csr-h1', KUBELET_CLIENT, { commonName: 'system:node:h1', organizations: ['system:nodes'] }, ['digital signature', 'client auth']);
    const created = await bootstrap.createCertificateSigningRequest({ body: client.body });
    expect(created.spec).toMatchObject({
      username: `system:bootstrap:${tokenId}`,
      groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'],
    });
    expect(created.spec.uid).toBeUndefined();
    expect(created.status?.certificate).toBeUndefined();

    await admin.replaceCertificateSigningRequestApproval({ name: 'node-csr-h1', body: approved(created) });
    const signed = await eventually(async () => {
      const csr = await bootstrap.readCertificateSigningRequest({ name: 'node-csr-h1' });
      return csr.status?.certificate ? csr : undefined;
    });
    const certPem = Buffer.from(signed.status?.certificate ?? '', 'base64').toString('utf8');
    const cert = new x509.X509Certificate(certPem);
    expect(cert.subjectName.getField('CN')).toEqual(['system:node:h1']);
    expect(cert.subjectName.getField('O')).toEqual(['system:nodes']);
    expect(cert.issuer).toBe('CN=kube-sim-ca');
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual([x509.ExtendedKeyUsage.clientAuth]);
    expect(await sim.ca.verifies(cert)).toBe(true);
    expect(cert.notAfter.getTime() - Date.now()).toBeGreaterThan(360 * 24 * 3600 * 1000);

    const kubelet = kubeConfigFor(sim, { certPem, keyPem: client.keyPem });
    const core = kubelet.makeApiClient(CoreV1Api);
    const node = await core.createNode({
      body: { metadata: { name: 'h1', labels: { 'kubernetes.io/hostname': 'h1' } }, status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }], addresses: [{ type: 'InternalIP', address: '198.18.0.11' }] } },
    });
    expect(node.status?.addresses?.[0].address).toBe('198.18.0.11');
    const serving = await csrBody('csr-serving-h1', 'kubernetes.io/kubelet-serving', { commonName: 'system:node:h1', organizations: ['system:nodes'], dnsNames: ['h1'], ipAddresses: ['198.18.0.11'] }, [
      'digital signature',
      'server auth',
    ]);
    const servingCsr = await kubelet.makeApiClient(CertificatesV1Api).createCertificateSigningRequest({ body: serving.body });
    expect(servingCsr.spec).toMatchObject({ username: 'system:node:h1', groups: ['system:nodes', 'system:authenticated'] });
    await admin.replaceCertificateSigningRequestApproval({ name: 'csr-serving-h1', body: approved(servingCsr) });
    const servingSigned = await eventually(async () => (await admin.readCertificateSigningRequest({ name: 'csr-serving-h1' })).status?.certificate);
    const servingCert = new x509.X509Certificate(Buffer.from(servingSigned, 'base64'));
    expect(servingCert.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON()).toEqual([
      { type: 'dns', value: 'h1' },
      { type: 'ip', value: '198.18.0.11' },
    ]);
    expect(servingCert.getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual([x509.ExtendedKeyUsage.serverAuth]);

    const ready = await core.patchNodeStatus(
      { name: 'h1', body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date().toISOString() }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const lease = await kubelet.makeApiClient(CoordinationV1Api).createNamespacedLease({ namespace: 'kube-node-lease', body: { metadata: { name: 'h1' }, spec: { holderIdentity: 'h1', leaseDurationSeconds: 40, renewTime: new V1MicroTime() } } });
    expect(lease.spec?.holderIdentity).toBe('h1');
  });

  it('tells callers who they are through SelfSubjectReview (kubectl auth whoami)', async () => {
    const token = sim.createBootstrapToken({ id: 'who123', secret: 'abcdefabcdefabcd' });
    const res = await rawRequest(sim, { method: 'POST', path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', token, body: '{}', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'SelfSubjectReview', status: { userInfo: { username: 'system:bootstrap:who123', groups: ['system:bootstrappers', 'system:authenticated'] } } });
    expect((await rawRequest(sim, { path: '/apis/authentication.k8s.io/v1/selfsubjectreviews' })).status).toBe(405);
  });

  it('stops accepting expired or non-authentication bootstrap tokens', async () => {
    const expiredToken = sim.createBootstrapToken({ expiration: new Date(Date.now() - 1000) });
    const signingOnly = sim.createBootstrapToken({ authentication: false, signing: true });
    expect((await rawRequest(sim, { path: '/api/v1/nodes', token: expiredToken })).status).toBe(401);
    expect((await rawRequest(sim, { path: '/api/v1/nodes', token: signingOnly })).status).toBe(401);
    expect((await rawRequest(sim, { path: '/api/v1/nodes', token: `${expiredToken.slice(0, 7)}0000000000000000` })).status).toBe(401);
  });

  it('never signs a denied CSR, and refuses Approved together with Denied (422)', async () => {
    const { body } = await csrBody('denied', KUBELET_CLIENT, { commonName: 'system:node:h2', organizations: ['system:nodes'] }, ['digital signature', 'client auth']);
    const created = await admin.createCertificateSigningRequest({ body });
    const denied = await admin.replaceCertificateSigningRequestApproval({ name: 'denied', body: approved(created, 'Denied') });
    const both = await apiFailure(admin.replaceCertificateSigningRequestApproval({ name: 'denied', body: approved(denied, 'Approved') }));
    expect(both.code).toBe(422);
    expect(both.status).toMatchObject({ reason: 'Invalid', message: expect.stringContaining('Approved and Denied conditions are mutually exclusive') });
    // The signer picks up an approval as it is written: once it is idle, it has decided on this one.
    await sim.signingIdle();
    const after = await admin.readCertificateSigningRequest({ name: 'denied' });
    expect(after.status?.certificate).toBeUndefined();
    expect(after.status?.conditions?.map((c) => c.type)).toEqual(['Denied']);
  });

  it('fails approved CSRs that break their signer rules instead of signing them', async () => {
    const { body } = await csrBody('bad-org', KUBELET_CLIENT, { commonName: 'system:node:h3', organizations: ['system:masters'] }, ['digital signature', 'client auth']);
    const created = await admin.createCertificateSigningRequest({ body });
    await admin.replaceCertificateSigningRequestApproval({ name: 'bad-org', body: approved(created) });
    const failed = await eventually(async () => (await admin.readCertificateSigningRequest({ name: 'bad-org' })).status?.conditions?.find((c) => c.type === 'Failed'));
    expect(failed).toMatchObject({ status: 'True', reason: 'SignerValidationFailure', message: 'subject organization is not system:nodes' });
    expect((await admin.readCertificateSigningRequest({ name: 'bad-org' })).status?.certificate).toBeUndefined();
  });

  it('validates CSRs on create', async () => {
    const { body } = await csrBody('invalid', KUBELET_CLIENT, { commonName: 'x' }, ['client auth']);
    const noSigner = await apiFailure(admin.createCertificateSigningRequest({ body: { ...body, spec: { ...body.spec, signerName: '', request: Buffer.from('junk').toString('base64') } } }));
    expect(noSigner.code).toBe(422);
    expect((noSigner.status['details'] as { causes: { field: string }[] }).causes.map((c) => c.field)).toEqual(['spec.request', 'spec.signerName']);
  });

  it('keeps its CA in --state-dir across restarts, so issued certificates still authenticate', async () => {
    const cert = await sim.issueClientCertificate('system:node:h9', ['system:nodes']);
    const again = await startKubeSim({ stateDir: join(dir, 'state') });
    try {
      expect(again.caCertPem).toBe(sim.caCertPem);
      const res = await rawRequest(again, { path: '/api/v1/nodes', cert });
      expect(res.status).toBe(200);
    } finally {
      await again.stop();
    }
  });
});
