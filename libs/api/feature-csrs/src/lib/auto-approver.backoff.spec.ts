import 'reflect-metadata';
import { KubeConfig, RbacAuthorizationV1Api, type V1ClusterRole } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { formatMessage } from '@ccos/shared/messages';
import { eventually } from '@ccos/shared/util-timing/testing';
import { type CsrReplica, createCsrReplica } from '../testing/csr-replica';
import { type CsrTestWorld, generateCertificateRequest, startCsrTestWorld } from '../testing/csr-test-world';
import { DEFAULT_MAX_PENDING_CSRS } from './auto-approver';

const APPROVAL_RULE = 'certificatesigningrequests/approval';

/**
 * What happens to the auto-approver when the cluster will not take a decision, and when a flood of
 * CSRs arrives. Resync is an hour away here, so only the approver's own retry can approve again.
 */
describe('CSR auto-approver: retries with backoff and the max-pending guard', () => {
  let world: CsrTestWorld;
  let feature: CsrReplica;
  let rbac: RbacAuthorizationV1Api;

  const approved = (name: string) => eventually(async () => ((await world.conditionsOf(name)).includes('Approved') ? true : undefined), 10_000, `${name} approved`);
  const decisionsOf = (name: string): Promise<Array<{ decision: string; reason: string; reason_coded: { code: string; params: Record<string, unknown> } | null }>> =>
    world.dataSource.query('SELECT decision, reason, reason_coded FROM csr_decisions WHERE cluster_id = $1 AND csr_name = $2 ORDER BY id', [world.clusterId, name]);

  const startReplica = async (): Promise<CsrReplica> => {
    const replica = createCsrReplica(world, {
      events: createInProcessEventBus(),
      logger: pino({ level: 'silent' }),
      approver: { identity: 'replica-a', csrResyncMs: 3_600_000, retryBackoff: { initialMs: 200, maxMs: 1_000 } },
    });
    await replica.start();
    await eventually(() => (replica.autoApprover.isLeading(world.clusterId) ? true : undefined), 10_000, 'leadership');
    return replica;
  };

  const decisionsAfter = (name: string, count: number): Promise<string[]> =>
    eventually(async () => {
      const rows = await decisionsOf(name);
      return rows.length >= count ? rows.map((row) => row.decision) : undefined;
    }, 5_000, `${count} decisions of ${name}`);

  beforeAll(async () => {
    world = await startCsrTestWorld({ autoApprove: true });
    feature = await startReplica();
    const config = new KubeConfig();
    config.loadFromString(world.sim.kubeconfig);
    rbac = config.makeApiClient(RbacAuthorizationV1Api);
  }, 120_000);
  afterAll(async () => {
    await feature?.stop();
    await world?.stop();
  });

  it('tries an approval the cluster refused again with backoff, without a new CSR event', async () => {
    const granted: V1ClusterRole = await rbac.readClusterRole({ name: 'ccos-scaler' });
    const withoutApproval = { ...granted, rules: (granted.rules ?? []).filter((rule) => !(rule.resources ?? []).includes(APPROVAL_RULE)) };
    expect(withoutApproval.rules.length).toBeLessThan((granted.rules ?? []).length);
    await rbac.replaceClusterRole({ name: 'ccos-scaler', body: withoutApproval });
    await world.addInstallingNode('retry-1', '198.18.1.21');
    const before = feature.autoApprover.counters(world.clusterId).retries;

    const client = await world.createCsr({ commonName: 'system:node:retry-1' });
    // The API server answers 403 to the approval: the approver schedules the CSR again, more than once.
    await eventually(() => (feature.autoApprover.counters(world.clusterId).retries >= before + 2 ? true : undefined), 10_000, 'the refused approval retried');
    expect(await world.conditionsOf(client.name)).toBe('');

    // The permission comes back; nothing about the CSR changes, and resync is an hour away.
    const { resourceVersion: _stale, ...metadata } = granted.metadata ?? {};
    await rbac.replaceClusterRole({ name: 'ccos-scaler', body: { ...granted, metadata } });
    await approved(client.name);
    // The decision row is written right after the cluster's approval.
    expect(await decisionsAfter(client.name, 1)).toEqual(['APPROVED']);
  });

  it(`${DEFAULT_MAX_PENDING_CSRS + 100} pending CSRs trip the guard: nothing is approved, the CSR and the metrics say why, and approval resumes once they are gone`, async () => {
    const flood = DEFAULT_MAX_PENDING_CSRS + 99;
    // Filed while no replica leads, so the test measures the guard, not how fast a flood is taken in.
    await feature.stop();
    // Someone holding the shared bootstrap credential files CSRs for names this service never installed.
    const requests = await Promise.all(Array.from({ length: flood }, (_, index) => generateCertificateRequest({ commonName: `system:node:flood-${index}`, organizations: ['system:nodes'] })));
    for (let index = 0; index < requests.length; index += 50) {
      const batch = requests.slice(index, index + 50);
      await Promise.all(batch.map((request, offset) => world.createCsr({ commonName: `system:node:flood-${index + offset}`, csrPem: request.csrPem, as: { shared: true } })));
    }
    await world.addInstallingNode('real-1', '198.18.1.22');
    const real = await world.createCsr({ commonName: 'system:node:real-1' });
    feature = await startReplica();

    const held = await eventually(async () => {
      const rows = await decisionsOf(real.name);
      return rows.length > 0 ? rows : undefined;
    }, 30_000, 'the real CSR recorded as held back');
    expect(held.map((row) => row.decision)).toEqual(['LEFT_PENDING']);
    expect(held[0]?.reason_coded).toEqual({ code: 'csr.decision.tooManyPending', params: { pending: flood + 1, max: DEFAULT_MAX_PENDING_CSRS } });
    expect(held[0]?.reason).toContain(`${flood + 1} CSRs are pending in this cluster, more than the limit of ${DEFAULT_MAX_PENDING_CSRS}`);
    expect(formatMessage('zh-CN', 'csr.decision.tooManyPending', { pending: flood + 1, max: DEFAULT_MAX_PENDING_CSRS })).toContain('自动批准已暂停');
    expect(await world.conditionsOf(real.name)).toBe('');
    expect(feature.autoApprover.leadership()).toEqual([{ clusterId: world.clusterId, leading: true, pausedBy: { pending: flood + 1, max: DEFAULT_MAX_PENDING_CSRS } }]);

    // The operator deletes the flood: the guard lets go and the real kubelet's CSR is approved.
    await world.admin.certificates.deleteCollectionCertificateSigningRequest({ fieldSelector: `metadata.name!=${real.name}` });
    expect((await world.admin.certificates.listCertificateSigningRequest()).items.map((csr) => csr.metadata?.name)).toEqual([real.name]);
    await approved(real.name);
    expect(feature.autoApprover.leadership()[0]?.pausedBy).toBeNull();
    expect(await decisionsAfter(real.name, 2)).toEqual(['LEFT_PENDING', 'APPROVED']);
  }, 120_000);
});
