import 'reflect-metadata';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus, type EventBus } from '@ccos/api/util-graphql';
import { KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER } from '@ccos/shared/domain';
import { eventually, FakeClock } from '@ccos/shared/util-timing/testing';
import { type CsrReplica, createCsrReplica } from '../testing/csr-replica';
import { type CsrTestWorld, startCsrTestWorld } from '../testing/csr-test-world';
import { type AutoApproverOptions, announceClusterSettingsChanged } from './auto-approver';

const logger = pino({ level: 'silent' });
const FAST_LEASE: AutoApproverOptions = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };

const conditionOf = (world: CsrTestWorld, name: string): Promise<string> => world.conditionsOf(name);

/** A serving CSR worker-r files with its own client certificate. */
function renewalOf(world: CsrTestWorld, node: string, ip: string, extra: { dnsNames?: string[]; ipAddresses?: string[]; as?: string } = {}) {
  return world.createCsr({
    as: { node: extra.as ?? node },
    signerName: KUBELET_SERVING_SIGNER,
    commonName: `system:node:${node}`,
    dnsNames: extra.dnsNames ?? [node],
    ipAddresses: extra.ipAddresses ?? [ip],
  });
}

describe('CSR auto-approver: serving-certificate renewals of nodes joined here', () => {
  let world: CsrTestWorld;
  let events: EventBus;
  let feature: CsrReplica;
  // kube-sim's timestamps and the policy's now, on one virtual time starting at the real time (TLS checks kube-sim's certificates against it).
  const clock = new FakeClock(new Date().toISOString(), false);

  beforeAll(async () => {
    // Join auto-approve off from the start: renewals have their own switch (on by default).
    world = await startCsrTestWorld({ autoApprove: false, clock });
    events = createInProcessEventBus();
  });
  afterEach(async () => {
    await feature?.stop();
  });
  afterAll(async () => {
    await world?.stop();
  });

  async function start(): Promise<void> {
    feature = createCsrReplica(world, { events, logger, approver: { identity: 'replica-r', ...FAST_LEASE } });
    await feature.start();
    await eventually(() => (feature.autoApprover.isLeading(world.clusterId) ? true : undefined), 5000, 'leadership');
  }

  it('approves a joined node\'s renewals with join auto-approve off, twice, each like a join decision; hostile ones stay pending with the check named', async () => {
    await start();
    const nodeId = await world.addJoinedNode('worker-r', '198.18.0.31');
    await world.addJoinedNode('worker-s', '198.18.0.32');

    const first = await renewalOf(world, 'worker-r', '198.18.0.31');
    await eventually(async () => ((await conditionOf(world, first.name)).includes('Approved') ? true : undefined), 3000, 'first renewal approved');
    await world.sim.signingIdle?.();
    // Certificates carry whole seconds: the second renewal's must be issued in a later one to be the newer.
    clock.elapse(1000);
    // The second renewal is compared with the certificate the first one got.
    const second = await renewalOf(world, 'worker-r', '198.18.0.31');
    await eventually(async () => ((await conditionOf(world, second.name)).includes('Approved') ? true : undefined), 3000, 'second renewal approved');

    const hostile = {
      otherNode: await renewalOf(world, 'worker-s', '198.18.0.32', { as: 'worker-r' }),
      foreignIp: await renewalOf(world, 'worker-r', '198.18.0.31', { ipAddresses: ['198.18.0.31', '10.9.9.9'] }),
      vip: await renewalOf(world, 'worker-r', '198.18.0.31', { ipAddresses: ['198.18.0.31', '198.18.0.2'] }),
      notJoinedHere: await renewalOf(world, 'stranger', '198.18.0.77'),
    };
    const expected: Record<keyof typeof hostile, string> = { otherNode: 'requester', foreignIp: 'renewal-sans', vip: 'no-cluster-address', notJoinedHere: 'joined-here' };
    for (const [what, csr] of Object.entries(hostile) as Array<[keyof typeof hostile, { name: string }]>) {
      const row = await eventually(async () => {
        const found = await world.dataSource.query(`SELECT decision, reason, checks FROM csr_decisions WHERE cluster_id = $1 AND csr_name = $2`, [world.clusterId, csr.name]);
        return found[0] as { decision: string; reason: string; checks: Array<{ name: string; passed: boolean }> } | undefined;
      }, 3000, `${what} recorded`);
      expect(row.decision, what).toBe('LEFT_PENDING');
      expect(row.checks.find((check) => check.name === expected[what])?.passed, `${what}: ${expected[what]} fails`).toBe(false);
      expect(await conditionOf(world, csr.name), `${what} stays pending`).toBe('');
    }

    const rows = await world.dataSource.query(`SELECT csr_name, node_id, decision, actor, reason, checks FROM csr_decisions WHERE cluster_id = $1 AND decision = 'APPROVED' ORDER BY id`, [world.clusterId]);
    expect(rows.map((row: { csr_name: string }) => row.csr_name)).toEqual([first.name, second.name]);
    for (const row of rows) {
      expect(row).toMatchObject({ node_id: nodeId, actor: 'auto-approver', reason: 'auto-approved: a serving-certificate renewal: all 18 checks passed' });
      expect(row.checks.map((check: { name: string }) => check.name)).toContain('renewal-sans');
    }
    const view = await feature.service.get(world.clusterId, second.name);
    expect(view?.certificate?.notAfter.getTime()).toBeGreaterThan(clock.now());
    expect(view?.certificate?.dnsNames).toEqual(['worker-r']);
    // The node's certificate picture: the serving certificate is the second renewal's; the oldest pending renewal is a hostile one.
    const picture = await feature.nodeCertificates.of(world.clusterId, 'worker-r');
    const serving = picture.certificates.find((entry) => entry.kind === 'SERVING');
    expect(serving).toMatchObject({ node: 'worker-r', nodeId, csrName: second.name, source: 'ISSUED_CSR', expiringSoon: false });
    expect(serving?.notAfter.getTime()).toBe(view?.certificate?.notAfter.getTime());
    expect(picture.pendingRenewals).toHaveLength(1);
    expect([hostile.foreignIp.name, hostile.vip.name]).toContain(picture.pendingRenewals[0].csrName);
    const pending = await feature.service.get(world.clusterId, hostile.foreignIp.name);
    expect(pending?.verdict).toMatchObject({ path: 'RENEWAL', decision: 'LEAVE_PENDING' });
    expect(pending?.verdict.reason).toContain('the renewal adds 10.9.9.9');
  });

  it('leaves renewals pending with renewals off, saying why, and approves them as soon as the switch is on', async () => {
    await world.setAutoApprove(true);
    await world.setAutoApproveRenewals(false);
    await start();
    await world.addJoinedNode('worker-t', '198.18.0.33');
    const csr = await renewalOf(world, 'worker-t', '198.18.0.33');
    const row = await eventually(async () => {
      const found = await world.dataSource.query(`SELECT decision, reason FROM csr_decisions WHERE cluster_id = $1 AND csr_name = $2`, [world.clusterId, csr.name]);
      return found[0] as { decision: string; reason: string } | undefined;
    }, 3000, 'left pending recorded');
    expect(row).toEqual({ decision: 'LEFT_PENDING', reason: 'renewal auto-approve is off for this cluster; the renewal policy would approve it' });
    expect(await conditionOf(world, csr.name)).toBe('');

    await world.setAutoApproveRenewals(true);
    announceClusterSettingsChanged(events, world.clusterId);
    await eventually(async () => ((await conditionOf(world, csr.name)).includes('Approved') ? true : undefined), 3000, 'approved once renewals are on');
  });

  it('leaves a node\'s own client-certificate renewal to the cluster, recording nothing', async () => {
    await start();
    await world.addJoinedNode('worker-u', '198.18.0.34');
    // worker-u is a Node of the cluster (the Node watch has seen it): its own client CSR is a renewal, not a join.
    await world.admin.core.createNode({ body: { metadata: { name: 'worker-u' } } });
    const watch = await feature.connections.watch(world.clusterId);
    await eventually(() => (watch.nodes().some((node) => node.name === 'worker-u') ? true : undefined), 3000, 'Node seen');
    const csr = await world.createCsr({ as: { node: 'worker-u' }, signerName: KUBELET_CLIENT_SIGNER, commonName: 'system:node:worker-u' });
    const verdict = await eventually(async () => {
      const view = await feature.service.get(world.clusterId, csr.name);
      return view?.verdict.decision === 'LEAVE_TO_CLUSTER' ? view.verdict : undefined;
    }, 3000, 'left to the cluster');
    expect(verdict.reason).toContain('renewed by the cluster\'s own approver (selfnodeclient)');
    const rows = await world.dataSource.query(`SELECT decision FROM csr_decisions WHERE csr_name = $1`, [csr.name]);
    expect(rows).toEqual([]);
  });
});
