import 'reflect-metadata';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { appErrorOf } from '@ccos/api/util-graphql/testing';
import { FakeClock, eventually } from '@ccos/shared/util-timing/testing';
import { type CsrReplica, createCsrReplica } from '../testing/csr-replica';
import { type CsrTestWorld, startCsrTestWorld } from '../testing/csr-test-world';

const OPERATOR = { username: 'olga', role: 'OPERATOR' } as const;
const ADMIN = { username: 'adam', role: 'ADMIN' } as const;

/**
 * The operator's path to a CSR decision, on kube-sim and the real database with auto-approval off:
 * what is refused before the cluster is asked, what a decision writes, and that deciding twice the
 * same way changes nothing.
 */
describe('CSR decisions by operators', () => {
  let world: CsrTestWorld;
  let feature: CsrReplica;
  const clock = new FakeClock(new Date().toISOString(), false);

  beforeAll(async () => {
    world = await startCsrTestWorld({ autoApprove: false, clock });
    feature = createCsrReplica(world, { events: createInProcessEventBus(), logger: pino({ level: 'silent' }), approver: { identity: 'replica-o' } });
    await feature.start();
  });
  afterAll(async () => {
    await feature?.stop();
    await world?.stop();
  });

  const decisionsOf = async (name: string) =>
    (await world.dataSource.query(`SELECT decision, actor, reason, forced, force_reason AS "forceReason", node_id AS "nodeId" FROM csr_decisions WHERE csr_name = $1 ORDER BY id`, [name])) as Array<Record<string, unknown>>;
  /** A CSR the watch has seen, so the service's snapshot holds it. */
  const seen = async (name: string) => {
    await eventually(async () => ((await feature.service.get(world.clusterId, name)) ? true : undefined), 5000, `${name} in the watch`);
    return name;
  };

  it('approves an install run\'s own client CSR for an OPERATOR, records who did, and answers a second approve with the CSR unchanged', async () => {
    const nodeId = await world.addInstallingNode('worker-o1', '198.18.0.61');
    const name = await seen((await world.createCsr({ commonName: 'system:node:worker-o1' })).name);
    expect((await feature.service.preview(world.clusterId)).find((verdict) => verdict.csrName === name)).toMatchObject({ decision: 'APPROVE' });
    const approved = await feature.service.approve(world.clusterId, name, OPERATOR, { force: false });
    expect(approved).toMatchObject({ name, status: expect.stringMatching(/^(APPROVED|ISSUED)$/), decidedBy: 'olga' });
    expect(await world.conditionsOf(name)).toContain('Approved');
    expect(await decisionsOf(name)).toEqual([{ decision: 'APPROVED', actor: 'olga', reason: expect.stringContaining('olga'), forced: false, forceReason: null, nodeId }]);
    await feature.service.approve(world.clusterId, name, OPERATOR, { force: false });
    expect(await decisionsOf(name)).toHaveLength(1);
    const denyApproved = await appErrorOf(feature.service.deny(world.clusterId, name, 'olga', 'changed my mind'));
    expect(denyApproved.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'csr.alreadyDecided' });
  });

  it('refuses what the policy refuses unless an ADMIN forces it with a reason, and records the force and what it overrode', async () => {
    // The shared bootstrapper asking for a node this service never added: no install is waiting for it.
    const name = await seen((await world.createCsr({ commonName: 'system:node:stranger', as: { shared: true } })).name);
    const refused = await appErrorOf(feature.service.approve(world.clusterId, name, OPERATOR, { force: false }));
    expect(refused.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'csr.policyRefuses', failedChecks: expect.arrayContaining([expect.any(String)]) });
    expect((await appErrorOf(feature.service.approve(world.clusterId, name, OPERATOR, { force: true, reason: 'I know this machine' }))).extensions).toMatchObject({ code: 'FORBIDDEN', messageCode: 'csr.forceNeedsAdmin' });
    expect((await appErrorOf(feature.service.approve(world.clusterId, name, ADMIN, { force: true, reason: '' }))).code).toBe('BAD_USER_INPUT');
    expect((await appErrorOf(feature.service.approve(world.clusterId, name, ADMIN, { force: false, reason: 'a reason without force' }))).extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'reason' });
    expect(await world.conditionsOf(name)).not.toMatch(/Approved|Denied/);
    expect(await decisionsOf(name)).toEqual([]);

    const why = 'rack 7 was re-imaged by the data centre team, ticket 4711';
    await feature.service.approve(world.clusterId, name, ADMIN, { force: true, reason: why });
    expect(await world.conditionsOf(name)).toContain('Approved');
    expect(await decisionsOf(name)).toEqual([{ decision: 'APPROVED', actor: 'adam', reason: expect.stringContaining(why), forced: true, forceReason: why, nodeId: null }]);
  });

  it('denies with the reason the kubelet will see, refuses an empty reason and a CSR that does not exist', async () => {
    const name = await seen((await world.createCsr({ commonName: 'system:node:unwanted', as: { shared: true } })).name);
    expect((await appErrorOf(feature.service.deny(world.clusterId, name, 'olga', '   '))).extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'reason' });
    await feature.service.deny(world.clusterId, name, 'olga', 'not one of ours');
    const written = await world.admin.certificates.readCertificateSigningRequest({ name });
    expect(written.status?.conditions).toEqual([expect.objectContaining({ type: 'Denied', reason: 'CcosScalerDeny', message: 'Denied by olga through ccos-scaler: not one of ours' })]);
    expect(await decisionsOf(name)).toEqual([expect.objectContaining({ decision: 'DENIED', actor: 'olga', reason: 'not one of ours', forced: false })]);
    expect((await appErrorOf(feature.service.approve(world.clusterId, name, ADMIN, { force: true, reason: 'approve it after all, please' }))).extensions).toMatchObject({ messageCode: 'csr.alreadyDecided' });
    expect((await appErrorOf(feature.service.deny(world.clusterId, 'csr-nobody-made', 'olga', 'no'))).code).toBe('NOT_FOUND');
  });
});
