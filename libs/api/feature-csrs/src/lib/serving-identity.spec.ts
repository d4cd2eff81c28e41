import 'reflect-metadata';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, createInProcessEventBus } from '@ccos/api/util-graphql';
import { KUBELET_SERVING_SIGNER, type SERVING_IDENTITY_CHECKS } from '@ccos/shared/domain';
import { eventually } from '@ccos/shared/util-timing/testing';
import { KUBERNETES_SERVICE_IP } from '@ccos/tools/kube-sim';
import { type CsrReplica, createCsrReplica } from '../testing/csr-replica';
import { type CsrTestWorld, startCsrTestWorld } from '../testing/csr-test-world';
import type { AutoApproverOptions } from './auto-approver';

/**
 * The rules every serving CSR is held to (SERVING_IDENTITY_CHECKS), walked on every path a serving
 * CSR can take (a node being installed here, a node joined here, a node this service never saw)
 * and by every decider (the auto-approver, an operator's approveCsr, an ADMIN's approveCsr with
 * force): none approves a hostile one.
 */
const logger = pino({ level: 'silent' });
const FAST_LEASE: AutoApproverOptions = { leaseDurationSeconds: 2, renewDeadlineSeconds: 1.5, retryPeriodSeconds: 0.25 };
const VIP = '198.18.0.2';
/** The cluster's API URL as registered (the connection itself goes to kube-sim): its base domain is lab.example. */
const API_URL = 'https://api.lab.example:6443';

type Path = 'join' | 'renewal' | 'never-seen';
type Check = (typeof SERVING_IDENTITY_CHECKS)[number];

/** The node each path's CSRs are for, and its address. */
const NODES: Record<Path, { readonly name: string; readonly ip: string }> = {
  join: { name: 'master-0', ip: '198.18.0.40' },
  renewal: { name: 'worker-j', ip: '198.18.0.41' },
  'never-seen': { name: 'worker-n', ip: '198.18.0.42' },
};

interface Hostile {
  readonly dns?: (node: string) => string[];
  readonly ips?: (ip: string) => string[];
  /** Whose client certificate files it (default: the node it names). */
  readonly as?: string;
  /** The never-overridable check it must fail (others may fail too). */
  readonly check: Check;
}

const HOSTILE: Record<string, Hostile> = {
  'the VIP': { ips: (ip) => [ip, VIP], check: 'no-cluster-address' },
  'the kubernetes Service ClusterIP (read from the cluster)': { ips: (ip) => [ip, KUBERNETES_SERVICE_IP], check: 'no-cluster-address' },
  'the API URL host': { dns: (node) => [node, 'api.lab.example'], check: 'no-cluster-address' },
  'api-int of the base domain': { dns: (node) => [node, 'API-INT.lab.example'], check: 'no-cluster-address' },
  kubernetes: { dns: (node) => [node, 'kubernetes'], check: 'no-cluster-address' },
  'kubernetes.default': { dns: (node) => [node, 'kubernetes.default'], check: 'no-cluster-address' },
  'kubernetes.default.svc': { dns: (node) => [node, 'kubernetes.default.svc'], check: 'no-cluster-address' },
  'kubernetes.default.svc.<cluster domain>': { dns: (node) => [node, 'kubernetes.default.svc.cluster.local'], check: 'no-cluster-address' },
  'a name not the node\'s own': { dns: (node) => [node, 'www.bank.example'], check: 'san-dns' },
  'another node\'s name': { dns: (node) => [node, 'worker-other'], check: 'san-dns' },
  'filed by another node': { as: 'worker-other', check: 'requester' },
  'master-0, the VIP and kubernetes.default.svc at once': { dns: (node) => [node, 'kubernetes.default.svc'], ips: (ip) => [ip, VIP], check: 'no-cluster-address' },
};

const PATHS: readonly Path[] = ['join', 'renewal', 'never-seen'];
const CASES = PATHS.flatMap((path) => Object.entries(HOSTILE).map(([what, hostile]) => ({ path, what, hostile })));

describe('never-overridable rules of every serving CSR, every path × every decider', () => {
  let world: CsrTestWorld;
  let feature: CsrReplica;
  const created = new Map<string, string>();
  const key = (path: Path, what: string): string => `${path}: ${what}`;

  beforeAll(async () => {
    world = await startCsrTestWorld({ autoApprove: true, autoApproveRenewals: true });
    await world.dataSource.query(`UPDATE clusters SET api_server_url = $1 WHERE id = $2`, [API_URL, world.clusterId]);
    // Being installed here now (its kubelet started a second ago), joined here a day ago, never seen.
    await world.addInstallingNode(NODES.join.name, NODES.join.ip);
    await world.addJoinedNode(NODES.renewal.name, NODES.renewal.ip);
    feature = createCsrReplica(world, { events: createInProcessEventBus(), logger, approver: { identity: 'replica-s', ...FAST_LEASE } });
    await feature.start();
    await eventually(() => (feature.autoApprover.isLeading(world.clusterId) ? true : undefined), 5000, 'leadership');
    for (const { path, what, hostile } of CASES) {
      const node = NODES[path];
      // Filed with a node client certificate the cluster CA signed, which this service never installed.
      const csr = await world.createCsr({
        as: { node: hostile.as ?? node.name },
        signerName: KUBELET_SERVING_SIGNER,
        commonName: `system:node:${node.name}`,
        dnsNames: hostile.dns?.(node.name) ?? [node.name],
        ipAddresses: hostile.ips?.(node.ip) ?? [node.ip],
      });
      created.set(key(path, what), csr.name);
    }
  }, 120_000);
  afterAll(async () => {
    await feature?.stop();
    await world?.stop();
  });

  const conditionOf = (name: string): Promise<string> => world.conditionsOf(name);

  /** The refusal of an approval, or null when it went through. */
  async function refusal(name: string, force: boolean): Promise<AppError | null> {
    try {
      await feature.service.approve(world.clusterId, name, { username: 'admin', role: 'ADMIN' }, force ? { force: true, reason: 'the node needs it, says the ticket' } : { force: false });
      return null;
    } catch (error) {
      if (error instanceof AppError) {
        return error;
      }
      throw error;
    }
  }

  it.each(CASES)('$path path, $what: the auto-approver leaves it, approveCsr refuses it, force refuses it', async ({ path, what, hostile }) => {
    const name = created.get(key(path, what)) ?? '';
    const recorded = await eventually(async () => {
      const rows = await world.dataSource.query(`SELECT decision, checks FROM csr_decisions WHERE cluster_id = $1 AND csr_name = $2`, [world.clusterId, name]);
      return rows[0] as { decision: string; checks: Array<{ name: string; passed: boolean; overridable: boolean }> } | undefined;
    }, 5000, `the auto-approver's decision on ${name}`);
    expect(recorded.decision).toBe('LEFT_PENDING');
    expect(recorded.checks.find((check) => check.name === hostile.check)).toMatchObject({ passed: false, overridable: false });

    const plain = await refusal(name, false);
    expect(plain?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION' });
    expect(plain?.extensions['blockingChecks']).toContain(hostile.check);

    const forced = await refusal(name, true);
    expect(forced?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION' });
    expect(forced?.extensions['blockingChecks']).toContain(hostile.check);
    expect(forced?.message).toMatch(new RegExp(`^force cannot approve ${name}: `));

    // A node never seen here filing in its own name is judged as a renewal; in another's, as a join.
    const expectedPath = path === 'join' || (path === 'never-seen' && hostile.as !== undefined) ? 'JOIN' : 'RENEWAL';
    expect((await feature.service.get(world.clusterId, name))?.verdict.path).toBe(expectedPath);
    expect(await conditionOf(name)).toBe('');
    const approvals = await world.dataSource.query(`SELECT count(*)::int AS n FROM csr_decisions WHERE csr_name = $1 AND decision = 'APPROVED'`, [name]);
    expect(approvals).toEqual([{ n: 0 }]);
  });

  it('lets force approve the honest renewal beside them: what is refused above is the hostile part', async () => {
    const node = NODES.renewal;
    const csr = await world.createCsr({ as: { node: node.name }, signerName: KUBELET_SERVING_SIGNER, commonName: `system:node:${node.name}`, dnsNames: [node.name], ipAddresses: [node.ip] });
    const view = await eventually(async () => (await feature.service.get(world.clusterId, csr.name)) ?? undefined, 5000, 'listed');
    // Its hostile rivals are pending for the same node: force goes past single-pending-renewal, and nothing else is in the way.
    expect(view.verdict.checks.filter((check) => !check.passed).map((check) => check.name)).toEqual(['single-pending-renewal']);
    expect(await refusal(csr.name, true)).toBeNull();
    expect(await conditionOf(csr.name)).toContain('Approved');
  });
});
