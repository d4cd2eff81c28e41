import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMessage } from '@ccos/shared/messages';
import { generateCertificateRequest, startSimWithClient, type SimWithClient } from '../testing/kube-sim-fixture';
import { summarizeCsr } from './csr';
import { approveCsr, denyCsr } from './csr-approval';
import type { KubeClient } from './kube-client';

describe('approveCsr / denyCsr', () => {
  let world: SimWithClient;
  const requests: string[] = [];

  beforeAll(async () => {
    world = await startSimWithClient({ log: (line) => requests.push(line) });
  });

  afterAll(async () => {
    await world?.stop();
  });

  const create = async (name: string): Promise<void> => {
    const { csrPem } = await generateCertificateRequest({ commonName: `system:node:${name}`, organizations: ['system:nodes'] });
    await world.client.call('create', (o) =>
      world.client.certificates.createCertificateSigningRequest(
        { body: { metadata: { name }, spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } } },
        o,
      ),
    );
  };
  const read = (name: string) => world.client.call('read', (o) => world.client.certificates.readCertificateSigningRequest({ name }, o));

  it('approves through /approval with a complete condition; the signer then issues the certificate', async () => {
    await create('a1');
    const before = Date.now();
    const result = await approveCsr(world.client, 'a1', { reason: 'AutoApproved', message: 'matches node a1 being installed' });
    expect(result).toMatchObject({ ok: true, changed: true, csr: { name: 'a1', state: 'Approved' } });
    expect(requests.some((line) => line.startsWith('PUT /apis/certificates.k8s.io/v1/certificatesigningrequests/a1/approval 200'))).toBe(true);
    const [condition] = (await read('a1')).status?.conditions ?? [];
    expect(condition).toMatchObject({ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'matches node a1 being installed' });
    expect(new Date(condition.lastUpdateTime ?? 0).getTime()).toBeGreaterThanOrEqual(before - 1000);
    await world.sim.signingIdle();
    expect(Buffer.from((await read('a1')).status?.certificate ?? '', 'base64').toString()).toContain('BEGIN CERTIFICATE');
  });

  it('uses default reasons, is idempotent, and refuses to flip a decision', async () => {
    await create('b1');
    expect(await denyCsr(world.client, 'b1')).toMatchObject({ ok: true, changed: true, csr: { state: 'Denied', conditions: [{ type: 'Denied', reason: 'CcosScalerDeny', message: 'This CSR was denied by ccos-scaler.' }] } });
    expect(await denyCsr(world.client, 'b1')).toMatchObject({ ok: true, changed: false });
    const refused = await approveCsr(world.client, 'b1');
    expect(refused).toMatchObject({ ok: false, reason: 'certificate signing request "b1" is already Denied' });
    expect(!refused.ok && refused.coded ? formatMessage('zh-CN', refused.coded.code, refused.coded.params) : null).toBe('证书签名请求“b1”已被拒绝');
    expect((await read('b1')).status?.conditions).toHaveLength(1);

    await create('b2');
    expect(await approveCsr(world.client, 'b2')).toMatchObject({ ok: true, changed: true, csr: { conditions: [{ reason: 'CcosScalerApprove' }] } });
    expect(await approveCsr(world.client, 'b2')).toMatchObject({ ok: true, changed: false });
    expect(await denyCsr(world.client, 'b2')).toMatchObject({ ok: false, reason: 'certificate signing request "b2" is already Approved' });
    const missing = await approveCsr(world.client, 'nope');
    expect(missing).toMatchObject({ ok: false, reason: 'certificate signing request "nope" not found' });
    expect(!missing.ok && missing.coded ? formatMessage('zh-CN', missing.coded.code, missing.coded.params) : null).toBe('找不到证书签名请求“nope”');
  });

  it('re-reads and retries when someone else wrote the CSR in between (409 Conflict)', async () => {
    await create('c1');
    const inner = world.client;
    let writes = 0;
    const racing: KubeClient = {
      ...inner,
      call: async (operation, run, signal) => {
        if (operation.startsWith('approve ') && writes++ === 0) {
          // Another writer changes the object between our read and our write.
          await inner.call('label', (o) => inner.certificates.patchCertificateSigningRequest({ name: 'c1', body: [{ op: 'add', path: '/metadata/labels', value: { touched: 'yes' } }] }, o));
        }
        return inner.call(operation, run, signal);
      },
    };
    const before = requests.length;
    expect(await approveCsr(racing, 'c1')).toMatchObject({ ok: true, changed: true, csr: { state: 'Approved' } });
    const approvals = requests.slice(before).filter((line) => line.startsWith('PUT /apis/certificates.k8s.io/v1/certificatesigningrequests/c1/approval'));
    expect(approvals.map((line) => line.split(' ')[2])).toEqual(['409', '200']);
    expect((await read('c1')).metadata?.labels).toEqual({ touched: 'yes' });
  });

  it('with the watch\'s copy of a pending, unlabelled CSR, writes the decision without reading it first; a stale copy is read again on the 409, a labelled one first', async () => {
    await create('d1');
    const pending = await read('d1');
    const known = await summarizeCsr(pending);
    let before = requests.length;
    expect(await approveCsr(world.client, 'd1', { known })).toMatchObject({ ok: true, changed: true, csr: { name: 'd1', state: 'Approved', conditions: [{ type: 'Approved', reason: 'CcosScalerApprove' }] } });
    expect(requests.slice(before).filter((line) => line.includes('/certificatesigningrequests/d1')).map((line) => line.split(' ').slice(0, 3).join(' '))).toEqual([
      'PUT /apis/certificates.k8s.io/v1/certificatesigningrequests/d1/approval 200',
    ]);
    // The body carried no spec: the API server keeps the stored one.
    expect((await read('d1')).spec).toEqual(pending.spec);

    await create('d2');
    const stale = await summarizeCsr(await read('d2'));
    expect(await denyCsr(world.client, 'd2')).toMatchObject({ ok: true, changed: true });
    before = requests.length;
    expect(await approveCsr(world.client, 'd2', { known: stale })).toMatchObject({ ok: false, reason: 'certificate signing request "d2" is already Denied' });
    expect(requests.slice(before).filter((line) => line.includes('/certificatesigningrequests/d2')).map((line) => line.split(' ').slice(0, 3).join(' '))).toEqual([
      'PUT /apis/certificates.k8s.io/v1/certificatesigningrequests/d2/approval 409',
      'GET /apis/certificates.k8s.io/v1/certificatesigningrequests/d2 200',
    ]);

    // One that carries labels is read first, so the write keeps them.
    await create('d3');
    await world.client.call('label', (o) => world.client.certificates.patchCertificateSigningRequest({ name: 'd3', body: [{ op: 'add', path: '/metadata/labels', value: { team: 'a' } }] }, o));
    const labelled = await summarizeCsr(await read('d3'));
    expect(labelled.plainMetadata).toBe(false);
    before = requests.length;
    expect(await approveCsr(world.client, 'd3', { known: labelled })).toMatchObject({ ok: true, changed: true });
    expect(requests.slice(before).filter((line) => line.includes('/certificatesigningrequests/d3')).map((line) => line.split(' ').slice(0, 3).join(' '))).toEqual([
      'GET /apis/certificates.k8s.io/v1/certificatesigningrequests/d3 200',
      'PUT /apis/certificates.k8s.io/v1/certificatesigningrequests/d3/approval 200',
    ]);
    expect((await read('d3')).metadata?.labels).toEqual({ team: 'a' });
  });
});
