import 'reflect-metadata';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { KUBELET_SERVING_SIGNER, OPENSHIFT_NODE_BOOTSTRAPPER } from '@ccos/shared/domain';
import { eventually, FakeClock } from '@ccos/shared/util-timing/testing';
import { type CsrReplica, createCsrReplica } from '../testing/csr-replica';
import { type CsrTestWorld, startCsrTestWorld } from '../testing/csr-test-world';
import type { AutoApproverOptions } from './auto-approver';

const logger = pino({ level: 'silent' });
const FAST_LEASE: AutoApproverOptions = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };
const NODE = 'worker-r';
const IP = '198.18.0.51';

/**
 * A node is removed, its machine wiped and reinstalled under the same name. Removal cannot revoke
 * the client certificate the old machine was issued (Kubernetes has no revocation), so that
 * certificate must count for nothing in the new install: join binding by key, not by name.
 */
describe('a removed node\'s old credential after a reinstall of the same name', () => {
  let world: CsrTestWorld;
  let feature: CsrReplica;
  // kube-sim's timestamps and the policy's now, on one virtual time starting at the real time.
  const clock = new FakeClock(new Date().toISOString(), false);

  beforeAll(async () => {
    world = await startCsrTestWorld({ autoApprove: true, autoApproveRenewals: true, clock });
    feature = createCsrReplica(world, { events: createInProcessEventBus(), logger, approver: { identity: 'replica-r', ...FAST_LEASE } });
    await feature.start();
    await eventually(() => (feature.autoApprover.isLeading(world.clusterId) ? true : undefined), 5000, 'leadership');
  });
  afterAll(async () => {
    await feature?.stop();
    await world?.stop();
  });

  const conditionOf = (name: string): Promise<string> => world.conditionsOf(name);

  const approved = (name: string, what: string) => eventually(async () => ((await conditionOf(name)).includes('Approved') ? true : undefined), 5000, `${what} approved`);

  /** The auto-approver's recorded decision on a CSR. */
  const decided = (name: string) =>
    eventually(async () => {
      const rows = await world.dataSource.query(`SELECT decision, checks FROM csr_decisions WHERE csr_name = $1 ORDER BY id`, [name]);
      return rows[0] as { decision: string; checks: Array<{ name: string; passed: boolean; overridable: boolean }> } | undefined;
    }, 5000, `a decision on ${name}`);

  /** Whether an ADMIN's force gets the CSR approved. */
  async function forceApproves(name: string): Promise<boolean> {
    try {
      await feature.service.approve(world.clusterId, name, { username: 'admin', role: 'ADMIN' }, { force: true, reason: 'it is the same machine name, approve it' });
      return true;
    } catch {
      return false;
    }
  }

  it('approves nothing the old machine\'s certificate files, on any path, and lets the reinstall join', async () => {
    // The first life of worker-r: installed here, its run's client CSR approved; the machine keeps that certificate.
    const firstNodeId = await world.addInstallingNode(NODE, IP);
    const oldClient = await world.createCsr({ commonName: `system:node:${NODE}` });
    await approved(oldClient.name, 'the first install\'s client CSR');
    await world.sim.signingIdle?.();
    // Removed (the Node deleted, the row REMOVED); the disk is wiped, a fresh OS boots, the name is added again.
    await world.dataSource.query(`UPDATE install_runs SET status = 'CANCELLED', finished_at = now() WHERE node_id = $1`, [firstNodeId]);
    await world.dataSource.query(`UPDATE nodes SET status = 'REMOVED' WHERE id = $1`, [firstNodeId]);
    const oldMachine = { certificateOf: oldClient.name };

    // The reinstall: a new run with a new identity; the old machine is still out there with its certificate.
    // Some minutes later (more than the tolerated clock skew).
    clock.elapse(5 * 60_000);
    const nodeId = await world.addInstallingNode(NODE, IP, 0);
    const staleServing = await world.createCsr({ as: oldMachine, signerName: KUBELET_SERVING_SIGNER, commonName: `system:node:${NODE}`, dnsNames: [NODE], ipAddresses: [IP] });
    const staleClient = await world.createCsr({ as: oldMachine, commonName: `system:node:${NODE}` });
    const newClient = await world.createCsr({ commonName: `system:node:${NODE}` });
    await approved(newClient.name, 'the reinstall\'s client CSR');
    await world.sim.signingIdle?.();
    const newServing = await world.createCsr({ as: { certificateOf: newClient.name }, signerName: KUBELET_SERVING_SIGNER, commonName: `system:node:${NODE}`, dnsNames: [NODE], ipAddresses: [IP] });
    await approved(newServing.name, 'the reinstall\'s serving CSR');

    // The approver has decided on each: left pending, or, when it first sees a stale CSR beside the reinstall's
    // approvable one (a busy machine lets both arrive in one pass), denied as superseded by it. Never approved.
    const serving = await decided(staleServing.name);
    expect(serving.decision).not.toBe('APPROVED');
    expect(serving.checks.find((check) => check.name === 'run-credential')).toMatchObject({ passed: false, overridable: false });
    const client = await decided(staleClient.name);
    expect(client.decision).not.toBe('APPROVED');
    expect(client.checks.find((check) => check.name === 'requester')).toMatchObject({ passed: false, overridable: false });
    expect((await feature.service.get(world.clusterId, staleServing.name))?.verdict.checks.find((check) => check.name === 'run-credential')?.detail).toContain(
      `issued for ${NODE} before its current install run`,
    );
    expect(await forceApproves(staleServing.name)).toBe(false);
    expect(await forceApproves(staleClient.name)).toBe(false);

    // The reinstall succeeded and joined: the old certificate's renewal attempt is the renewal path's now, and still refused.
    await world.dataSource.query(`UPDATE install_runs SET status = 'SUCCEEDED', finished_at = now() WHERE node_id = $1`, [nodeId]);
    await world.dataSource.query(`UPDATE nodes SET status = 'JOINED' WHERE id = $1`, [nodeId]);
    const lateServing = await world.createCsr({ as: oldMachine, signerName: KUBELET_SERVING_SIGNER, commonName: `system:node:${NODE}`, dnsNames: [NODE], ipAddresses: [IP] });
    const late = await decided(lateServing.name);
    expect(late.decision).toBe('LEFT_PENDING');
    expect(late.checks.find((check) => check.name === 'run-credential')).toMatchObject({ passed: false, overridable: false });
    expect((await feature.service.get(world.clusterId, lateServing.name))?.verdict.path).toBe('RENEWAL');
    expect(await forceApproves(lateServing.name)).toBe(false);
    // While the new machine's own renewal is approved: the old machine's pending request does not stand in its way.
    const renewal = await world.createCsr({ as: { certificateOf: newClient.name }, signerName: KUBELET_SERVING_SIGNER, commonName: `system:node:${NODE}`, dnsNames: [NODE], ipAddresses: [IP] });
    await approved(renewal.name, 'the new machine\'s renewal');

    for (const name of [staleServing.name, staleClient.name, lateServing.name]) {
      expect(await conditionOf(name), name).not.toContain('Approved');
      expect(await world.dataSource.query(`SELECT count(*)::int AS n FROM csr_decisions WHERE csr_name = $1 AND decision = 'APPROVED'`, [name])).toEqual([{ n: 0 }]);
    }
  });

  it('does not let a client certificate force-approved for the name before the install stall the install', async () => {
    // Before worker-f is installed here, an ADMIN force-approves a client CSR for it (a machine set up by hand, say).
    const early = await world.createCsr({ commonName: 'system:node:worker-f', as: { shared: true } });
    await eventually(async () => ((await feature.service.get(world.clusterId, early.name)) ? true : undefined), 5000, 'listed');
    expect(await forceApproves(early.name)).toBe(true);
    expect((await world.admin.certificates.readCertificateSigningRequest({ name: early.name })).spec.username).toBe(OPENSHIFT_NODE_BOOTSTRAPPER);
    // Then the install: its kubelet started a second ago, well within the clock-skew tolerance of that approval.
    await world.addInstallingNode('worker-f', '198.18.0.52');
    const client = await world.createCsr({ commonName: 'system:node:worker-f' });
    await approved(client.name, 'the install\'s client CSR');
    await world.sim.signingIdle?.();
    const serving = await world.createCsr({ as: { certificateOf: client.name }, signerName: KUBELET_SERVING_SIGNER, commonName: 'system:node:worker-f', dnsNames: ['worker-f'], ipAddresses: ['198.18.0.52'] });
    await approved(serving.name, 'the install\'s serving CSR');
  });
});
