import 'reflect-metadata';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AuditEntry, type AuditSink, createInProcessEventBus, type EventBus } from '@ccos/api/util-graphql';
import { KUBELET_SERVING_SIGNER } from '@ccos/shared/domain';
import { eventually, FakeClock } from '@ccos/shared/util-timing/testing';
import { type CsrReplica, createCsrReplica } from '../testing/csr-replica';
import { type CsrTestWorld, startCsrTestWorld } from '../testing/csr-test-world';
import { type AutoApproverOptions, type ImpostorDenied, announceClusterSettingsChanged } from './auto-approver';

const logger = pino({ level: 'silent' });

/** Short lease timings so a fail-over happens within the test. */
const FAST_LEASE: AutoApproverOptions = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };

/** One replica of the service: its own watches, service and auto-approver. */
function replica(world: CsrTestWorld, events: EventBus, identity: string, approver: AutoApproverOptions = FAST_LEASE, audit?: AuditSink): CsrReplica {
  return createCsrReplica(world, { events, logger, audit, approver: { identity, ...approver } });
}

async function conditionOf(world: CsrTestWorld, name: string): Promise<string | undefined> {
  return (await world.conditionsOf(name)) || undefined;
}

describe('CSR auto-approver against kube-sim', () => {
  let world: CsrTestWorld;
  let events: EventBus;
  const running: CsrReplica[] = [];
  // One virtual time for kube-sim's timestamps, the policy and (where a test moves it) the Lease;
  // it starts at the real time, which TLS checks kube-sim's certificates against.
  const clock = new FakeClock(new Date().toISOString(), false);

  beforeAll(async () => {
    world = await startCsrTestWorld({ autoApprove: true, clock });
    events = createInProcessEventBus();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((feature) => feature.stop()));
  });
  afterAll(async () => {
    await world?.stop();
  });

  it('approves a node\'s client and serving CSRs within a second and records why', async () => {
    const a = replica(world, events, 'replica-a');
    running.push(a);
    await a.start();
    await eventually(() => (a.autoApprover.isLeading(world.clusterId) ? true : undefined), 5000, 'leadership');
    const nodeId = await world.addInstallingNode('worker-1', '198.18.0.11');

    const client = await world.createCsr({ commonName: 'system:node:worker-1' });
    await eventually(async () => ((await conditionOf(world, client.name))?.includes('Approved') ? true : undefined), 1000, 'client CSR approved within 1 s');
    // The kubelet files its serving CSR with the client certificate it was just issued.
    const serving = await world.createCsr({
      as: { certificateOf: client.name },
      signerName: KUBELET_SERVING_SIGNER,
      commonName: 'system:node:worker-1',
      dnsNames: ['worker-1'],
      ipAddresses: ['198.18.0.11'],
    });
    await eventually(async () => ((await conditionOf(world, serving.name))?.includes('Approved') ? true : undefined), 1000, 'serving CSR approved within 1 s');

    // The decision is written right after the approval; the test may see the condition first.
    const rows = await eventually(async () => {
      const found = await world.dataSource.query(`SELECT csr_name, node_id, decision, actor, reason, checks FROM csr_decisions WHERE cluster_id = $1 ORDER BY id`, [world.clusterId]);
      return found.length === 2 ? found : undefined;
    }, 1000, 'two decisions recorded');
    expect(rows.map((row: { csr_name: string }) => row.csr_name)).toEqual([client.name, serving.name]);
    expect(rows[0]).toMatchObject({ node_id: nodeId, decision: 'APPROVED', actor: 'auto-approver', reason: 'auto-approved: all 16 checks passed' });
    expect(rows[0].checks).toHaveLength(16);
    expect(rows[1]).toMatchObject({ decision: 'APPROVED', reason: 'auto-approved: all 21 checks passed' });
    // The signer issued both certificates.
    await world.sim.signingIdle?.();
    const issued = await world.admin.certificates.readCertificateSigningRequest({ name: serving.name });
    expect(issued.status?.certificate).toBeTruthy();
  });

  it('leaves a forged CSR pending, records the failing checks once, and tells the install step its name', async () => {
    const a = replica(world, events, 'replica-a');
    running.push(a);
    await a.start();
    await eventually(() => (a.autoApprover.isLeading(world.clusterId) ? true : undefined), 5000, 'leadership');
    await world.addInstallingNode('worker-2', '198.18.0.12');
    // A serving certificate for worker-2 that also claims the API server's service IP and name.
    const forged = await world.createCsr({
      as: { node: 'worker-2' },
      signerName: KUBELET_SERVING_SIGNER,
      commonName: 'system:node:worker-2',
      dnsNames: ['worker-2', 'kubernetes.default.svc'],
      ipAddresses: ['198.18.0.12', '10.96.0.1'],
    });
    const recorded = await eventually(async () => {
      const rows = await world.dataSource.query(`SELECT decision, actor, reason, checks FROM csr_decisions WHERE csr_name = $1`, [forged.name]);
      return rows.length > 0 ? rows : undefined;
    }, 2000, 'LEFT_PENDING recorded');
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ decision: 'LEFT_PENDING', actor: 'auto-approver', reason: 'DNS name kubernetes.default.svc is not the name of worker-2, the node the subject names; a serving certificate names its own node only' });
    const failing = (recorded[0].checks as Array<{ name: string; passed: boolean; detail: string }>).filter((check) => !check.passed);
    expect(failing.map((check) => check.name)).toEqual(['san-dns', 'san-ip', 'no-cluster-address', 'client-bootstrapped', 'run-credential']);
    expect(failing[1].detail).toContain('IP address 10.96.0.1 is not an address of worker-2');
    // 10.96.0.1 is the kubernetes Service's ClusterIP, read from the cluster.
    expect(failing[2].detail).toContain('kubernetes.default.svc, 10.96.0.1 are addresses of the cluster itself');
    expect(await conditionOf(world, forged.name)).toBeUndefined();

    // More events do not repeat the record: once the approver has decided on a later CSR, there is still one.
    const stranger = await world.createCsr({ commonName: 'system:node:not-in-inventory' });
    await eventually(async () => {
      const rows = await world.dataSource.query(`SELECT 1 FROM csr_decisions WHERE csr_name = $1`, [stranger.name]);
      return rows.length > 0 ? true : undefined;
    }, 2000, 'the later CSR decided');
    const again = await world.dataSource.query(`SELECT count(*)::int AS n FROM csr_decisions WHERE csr_name = $1`, [forged.name]);
    expect(again[0].n).toBe(1);
    expect(await a.service.pendingCsrNamesFor(world.clusterId, 'worker-2')).toEqual([forged.name]);
  });

  it('denies an older duplicate as superseded when auto-approve is switched on, and reacts to the switch at once', async () => {
    await world.setAutoApprove(false);
    // The safety net re-reads the settings only every minute: anything sooner is the announcement's doing.
    const clusterResyncMs = 60_000;
    const a = replica(world, events, 'replica-a', { ...FAST_LEASE, clusterResyncMs });
    running.push(a);
    await a.start();
    await world.addInstallingNode('worker-3', '198.18.0.13');
    const older = await world.createCsr({ commonName: 'system:node:worker-3' });
    // creationTimestamp has a resolution of one second.
    clock.elapse(1000);
    const newer = await world.createCsr({ commonName: 'system:node:worker-3' });
    // The replica's watch has both: an approver that were running would have seen them too.
    await eventually(async () => ((await a.service.pendingCsrNamesFor(world.clusterId, 'worker-3')).length === 2 ? true : undefined), 2000, 'both CSRs in the watch');
    expect(await conditionOf(world, older.name)).toBeUndefined();
    expect(await conditionOf(world, newer.name)).toBeUndefined();

    await world.setAutoApprove(true);
    const switchedAt = performance.now();
    announceClusterSettingsChanged(events, world.clusterId);
    await eventually(async () => ((await conditionOf(world, newer.name)) === 'Approved' ? true : undefined), 5000, 'newer approved');
    await eventually(async () => ((await conditionOf(world, older.name)) === 'Denied' ? true : undefined), 2000, 'older denied');
    expect(performance.now() - switchedAt).toBeLessThan(clusterResyncMs);
    const denied = await world.admin.certificates.readCertificateSigningRequest({ name: older.name });
    expect(denied.status?.conditions?.[0]).toMatchObject({ type: 'Denied', reason: 'CcosScalerSuperseded' });
    expect(denied.status?.conditions?.[0]?.message).toMatch(new RegExp(`^superseded by the newer CSR ${newer.name} \\(created .*\\) for worker-3 with the same signer$`));
  });

  it('denies impostors filing for a node with the shared credential, every time, naming them, and approves the real kubelet\'s CSR', async () => {
    const audited: AuditEntry[] = [];
    const impostors: ImpostorDenied[] = [];
    const a = replica(world, events, 'replica-a', { ...FAST_LEASE, onImpostorDenied: (event) => impostors.push(event) }, { record: async (entry) => void audited.push(entry) });
    running.push(a);
    await a.start();
    await eventually(() => (a.autoApprover.isLeading(world.clusterId) ? true : undefined), 5000, 'leadership');
    const nodeId = await world.addInstallingNode('worker-7', '198.18.0.17');
    const runId: string = (await world.dataSource.query(`SELECT id FROM install_runs WHERE node_id = $1`, [nodeId]))[0].id;
    // The impostor races the kubelet: one CSR before it, two after, all with the shared credential.
    const before = await world.createCsr({ commonName: 'system:node:worker-7', as: { shared: true } });
    const real = await world.createCsr({ commonName: 'system:node:worker-7' });
    const after = await world.createCsr({ commonName: 'system:node:worker-7', as: { shared: true } });
    const later = await world.createCsr({ commonName: 'system:node:worker-7', as: { shared: true }, organizations: ['system:nodes', 'system:masters'] });
    await eventually(async () => ((await conditionOf(world, real.name)) === 'Approved' ? true : undefined), 2000, 'the real CSR approved');
    for (const impostor of [before, after, later]) {
      await eventually(async () => ((await conditionOf(world, impostor.name)) === 'Denied' ? true : undefined), 2000, `${impostor.name} denied`);
      const denied = await world.admin.certificates.readCertificateSigningRequest({ name: impostor.name });
      expect(denied.status?.conditions?.[0]).toMatchObject({ type: 'Denied', reason: 'CcosScalerImpostor' });
      expect(denied.status?.conditions?.[0]?.message).toBe(
        `impostor: a client CSR for worker-7 requested by system:serviceaccount:openshift-machine-config-operator:node-bootstrapper, not by the bootstrap identity of the install run of worker-7 (${world.identityOf('worker-7')?.username}) nor by the node itself`,
      );
    }
    await eventually(() => (impostors.length === 3 ? true : undefined), 2000, 'three impostors raised');
    expect(new Set(impostors.map((event) => event.requester))).toEqual(new Set(['system:serviceaccount:openshift-machine-config-operator:node-bootstrapper']));
    expect(audited.filter((entry) => entry.detail['impostor'] === true).map((entry) => entry.targetId).sort()).toEqual([before.name, after.name, later.name].sort());
    const notices = await world.dataSource.query(`SELECT kind, subject, count, message FROM install_run_notices WHERE run_id = $1`, [runId]);
    expect(notices).toEqual([{ kind: 'CSR_IMPOSTOR', subject: 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper', count: 3, message: expect.stringMatching(/^denied csr-/) }]);
    expect(a.autoApprover.counters(world.clusterId)).toMatchObject({ approved: 1, impostors: 3 });
  });

  it('fails over: only the Lease holder decides, and a standby takes over when the leader dies', async () => {
    // The Lease runs on virtual time, moved only once both replicas' electors wait on it.
    const a = replica(world, events, 'replica-a', { ...FAST_LEASE, releaseOnStop: false, leaseClock: clock });
    const b = replica(world, events, 'replica-b', { ...FAST_LEASE, leaseClock: clock });
    running.push(b);
    await a.start();
    await clock.passTimeUntil(() => a.autoApprover.isLeading(world.clusterId), 1, 5000, 'a leads');
    await b.start();
    await clock.passTime(600, 2);
    expect(b.autoApprover.isLeading(world.clusterId)).toBe(false);

    await world.addInstallingNode('worker-4', '198.18.0.14');
    const first = await world.createCsr({ commonName: 'system:node:worker-4' });
    await eventually(async () => ((await conditionOf(world, first.name)) === 'Approved' ? true : undefined), 1000, 'approved by a');
    await eventually(() => (a.autoApprover.counters(world.clusterId).approved === 1 ? true : undefined), 1000, 'a counted its approval');
    expect(b.autoApprover.counters(world.clusterId).approved).toBe(0);

    // a dies without releasing the Lease: b may take over only once the lease expired on its clock.
    const diedAt = clock.monotonic();
    await a.stop();
    await clock.passTimeUntil(() => b.autoApprover.isLeading(world.clusterId), 1, 6000, 'b leads');
    const takeover = clock.monotonic() - diedAt;
    expect(takeover).toBeGreaterThan((FAST_LEASE.leaseDurationSeconds ?? 0) * 1000 - 2 * (FAST_LEASE.retryPeriodSeconds ?? 0) * 1000);
    expect(takeover).toBeLessThan(4000);

    await world.addInstallingNode('worker-5', '198.18.0.15');
    const second = await world.createCsr({ commonName: 'system:node:worker-5' });
    await eventually(async () => ((await conditionOf(world, second.name)) === 'Approved' ? true : undefined), 1000, 'approved by b');
    await eventually(() => (b.autoApprover.counters(world.clusterId).approved === 1 ? true : undefined), 1000, 'b counted its approval');

    const lease = await world.admin.coordination.readNamespacedLease({ name: 'ccos-scaler-csr-approver', namespace: 'kube-system' });
    expect(lease.spec?.holderIdentity).toBe(`replica-b/${world.clusterId.slice(0, 8)}`);
    expect(lease.spec?.leaseTransitions).toBeGreaterThanOrEqual(1);
  });

  it('hands the Lease over at once on a clean stop', async () => {
    const a = replica(world, events, 'replica-a', { ...FAST_LEASE, leaseClock: clock });
    const b = replica(world, events, 'replica-b', { ...FAST_LEASE, leaseClock: clock });
    running.push(b);
    await a.start();
    await clock.passTimeUntil(() => a.autoApprover.isLeading(world.clusterId), 1, 5000, 'a leads');
    await b.start();
    await clock.sleeping(2);
    const stoppedAt = clock.monotonic();
    await a.stop();
    await clock.passTimeUntil(() => b.autoApprover.isLeading(world.clusterId), 1, 3000, 'b leads');
    // b's next attempt after the release, long before the lease could have expired.
    expect(clock.monotonic() - stoppedAt).toBeLessThan((FAST_LEASE.retryPeriodSeconds ?? 0) * 1.2 * 1000 + 1);
  });
});
