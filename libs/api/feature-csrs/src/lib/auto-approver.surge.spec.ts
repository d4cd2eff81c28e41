import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import { KUBELET_SERVING_SIGNER } from '@ccos/shared/domain';
import { eventually } from '@ccos/shared/util-timing/testing';
import { type CsrReplica, createCsrReplica } from '../testing/csr-replica';
import { type CsrTestWorld, generateCertificateRequest, startCsrTestWorld } from '../testing/csr-test-world';

const HOSTS = 20;
/**
 * Measured on this 2-core machine under other people's load (load average 15–27): the 40
 * client CSRs (20 real, 20 impostors) were decided in 3.1–6.1 s, the 20 serving CSRs in 2.2–4.4 s
 * (eight runs). The bound leaves room for a busier machine; a decision per CSR in the burst bench
 * (bench/csr-approval-latency.ts, 200 at once) took ~90 ms.
 */
const SURGE_BOUND_MS = 15_000;

interface CsrState {
  readonly name: string;
  readonly conditions: string[];
}

/**
 * A CSR surge: 20 hosts reach START_KUBELET together. Each one's kubelet files its client CSR
 * with its run's own bootstrap identity while an impostor with the shared bootstrap credential
 * files one for the same node; then each node files its serving CSR. With auto-approve on,
 * every real CSR is approved within the bound, each exactly once (one Approved condition, one
 * decision row), and no impostor's is.
 */
describe('CSR auto-approver: 20 hosts at once', () => {
  let world: CsrTestWorld;
  let feature: CsrReplica;
  const hostnames = Array.from({ length: HOSTS }, (_, index) => `surge-${index + 1}`);
  const ipOf = (index: number) => `198.18.1.${index + 10}`;

  const states = async (names: readonly string[]): Promise<CsrState[]> => {
    const listed = await world.admin.certificates.listCertificateSigningRequest();
    return listed.items
      .filter((csr) => names.includes(csr.metadata?.name ?? ''))
      .map((csr) => ({ name: csr.metadata?.name ?? '', conditions: (csr.status?.conditions ?? []).map((condition) => condition.type) }));
  };
  const settled = (names: readonly string[], want: (state: CsrState) => boolean) =>
    eventually(async () => {
      const found = await states(names);
      return found.length === names.length && found.every(want) ? found : undefined;
    }, SURGE_BOUND_MS * 2, 'the surge settled');

  beforeAll(async () => {
    world = await startCsrTestWorld({ autoApprove: true });
    feature = createCsrReplica(world, { events: createInProcessEventBus(), logger: pino({ level: 'silent' }), approver: { identity: 'replica-a' } });
    await feature.start();
    await eventually(() => (feature.autoApprover.isLeading(world.clusterId) ? true : undefined), 10_000, 'leadership');
    for (const [index, hostname] of hostnames.entries()) {
      await world.addInstallingNode(hostname, ipOf(index));
    }
  }, 120_000);
  afterAll(async () => {
    await feature?.stop();
    await world?.stop();
  });

  it('approves every real client and serving CSR within the bound, each once, and no impostor', async () => {
    // Keys and requests made beforehand: the clock measures the approver, not key generation.
    const clientPems = await Promise.all(hostnames.map((hostname) => generateCertificateRequest({ commonName: `system:node:${hostname}`, organizations: ['system:nodes'] })));
    const impostorPems = await Promise.all(hostnames.map(async (hostname) => (await generateCertificateRequest({ commonName: `system:node:${hostname}`, organizations: ['system:nodes'] })).csrPem));

    const clientsAt = performance.now();
    const created = await Promise.all(
      hostnames.flatMap((hostname, index) => [
        world.createCsr({ commonName: `system:node:${hostname}`, ...clientPems[index] }).then((csr) => ({ ...csr, real: true, hostname })),
        world.createCsr({ commonName: `system:node:${hostname}`, csrPem: impostorPems[index], as: { shared: true } }).then((csr) => ({ ...csr, real: false, hostname })),
      ]),
    );
    const real = created.filter((csr) => csr.real).map((csr) => csr.name);
    const impostors = created.filter((csr) => !csr.real).map((csr) => csr.name);
    await settled([...real, ...impostors], (state) => state.conditions.length > 0);
    const clientsMs = performance.now() - clientsAt;

    const servingPems = await Promise.all(
      hostnames.map(async (hostname, index) => (await generateCertificateRequest({ commonName: `system:node:${hostname}`, organizations: ['system:nodes'], dnsNames: [hostname], ipAddresses: [ipOf(index)] })).csrPem),
    );
    // Each kubelet files its serving CSR with the client certificate its run's CSR was issued.
    const issuedTo = new Map(created.filter((csr) => csr.real).map((csr) => [csr.hostname, csr.name]));
    await world.sim.signingIdle?.();
    const servingAt = performance.now();
    const serving = await Promise.all(
      hostnames.map((hostname, index) =>
        world.createCsr({ as: { certificateOf: issuedTo.get(hostname) ?? '' }, signerName: KUBELET_SERVING_SIGNER, commonName: `system:node:${hostname}`, csrPem: servingPems[index] }),
      ),
    );
    const servingNames = serving.map((csr) => csr.name);
    await settled(servingNames, (state) => state.conditions.length > 0);
    const servingMs = performance.now() - servingAt;
    console.log(`CSR surge, ${HOSTS} hosts: ${real.length} client + ${impostors.length} impostor CSRs decided in ${clientsMs.toFixed(0)} ms, ${servingNames.length} serving CSRs in ${servingMs.toFixed(0)} ms`);

    const byName = new Map((await states([...real, ...impostors, ...servingNames])).map((state) => [state.name, state.conditions]));
    for (const name of [...real, ...servingNames]) {
      expect(byName.get(name), name).toEqual(['Approved']);
    }
    for (const name of impostors) {
      expect(byName.get(name), name).toEqual(['Denied']);
    }
    expect(clientsMs).toBeLessThan(SURGE_BOUND_MS);
    expect(servingMs).toBeLessThan(SURGE_BOUND_MS);

    // One decision per CSR: the approved ones approved once, by the approver, nothing for an impostor but its denial.
    // Each decision is written right after its approval, so the conditions may be seen first.
    const decisions = await eventually(async () => {
      const rows: Array<{ csr_name: string; decision: string; n: number }> = await world.dataSource.query(
        `SELECT csr_name, decision, count(*)::int AS n FROM csr_decisions WHERE cluster_id = $1 GROUP BY csr_name, decision`,
        [world.clusterId],
      );
      return rows.filter((row) => row.decision === 'APPROVED').length >= real.length + servingNames.length ? rows : undefined;
    }, 10_000, 'every approval recorded');
    const approvedRows = decisions.filter((row) => row.decision === 'APPROVED');
    expect(approvedRows.map((row) => row.csr_name).sort()).toEqual([...real, ...servingNames].sort());
    expect(approvedRows.every((row) => row.n === 1)).toBe(true);
    expect(decisions.filter((row) => impostors.includes(row.csr_name)).map((row) => row.decision)).not.toContain('APPROVED');
    expect(feature.autoApprover.counters(world.clusterId)).toMatchObject({ approved: HOSTS * 2, impostors: HOSTS });
  }, 120_000);
});
