import { describe, expect, it } from 'vitest';
import {
  type ClusterNodeFacts, type CsrFacts, type CsrPolicyContext, type CsrRequestFacts, type InventoryNodeFacts,
  CLIENT_CSR_CHECKS, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, SERVING_RENEWAL_CSR_CHECKS,
  evaluateCsr, evaluatePendingCsrs, forceBlockers,
} from './csr-policy';

/** The renewal path: serving certificates of nodes this service joined, a year (or ten minutes) on. */
const NOW = new Date('2026-06-01T12:00:00Z');
const minutesAgo = (minutes: number): Date => new Date(NOW.getTime() - minutes * 60_000);
const minutesFromNow = (minutes: number): Date => new Date(NOW.getTime() + minutes * 60_000);

const VIP = '198.18.0.2';
const NODE_GROUPS = ['system:nodes', 'system:authenticated'];
const asNode = (hostname: string): Pick<CsrFacts, 'username' | 'uid' | 'groups'> => ({ username: `system:node:${hostname}`, uid: `uid-node-${hostname}`, groups: NODE_GROUPS });

const identity = (hostname: string) => ({ username: `system:serviceaccount:ccos-scaler-bootstrap:run-${hostname}`, uid: `uid-${hostname}` });
const INVENTORY: InventoryNodeFacts[] = [
  // Joined here two days ago: the install's approval window closed long since.
  { hostname: 'worker-1', ips: ['198.18.0.11'], joined: true, installRun: { status: 'SUCCEEDED', kubeletStartedAt: minutesAgo(2 * 24 * 60), bootstrapIdentity: identity('worker-1') } },
  { hostname: 'worker-2', ips: ['198.18.0.12'], joined: true, installRun: { status: 'SUCCEEDED', kubeletStartedAt: minutesAgo(2 * 24 * 60), bootstrapIdentity: identity('worker-2') } },
  // In the inventory, install failed: not joined here.
  { hostname: 'worker-3', ips: ['198.18.0.13'], joined: false, installRun: { status: 'FAILED', kubeletStartedAt: minutesAgo(60 * 3), bootstrapIdentity: identity('worker-3') } },
  // Being installed right now: the join path decides.
  { hostname: 'worker-4', ips: ['198.18.0.14'], joined: false, installRun: { status: 'RUNNING', kubeletStartedAt: minutesAgo(2), bootstrapIdentity: identity('worker-4') } },
];

const CLUSTER_NODES: ClusterNodeFacts[] = [
  { name: 'master-0', ready: true, validClientCertificate: true, addresses: ['198.18.0.10', 'master-0'] },
  { name: 'worker-1', ready: true, validClientCertificate: true, addresses: ['198.18.0.11', 'worker-1'] },
  { name: 'worker-2', ready: true, validClientCertificate: true, addresses: ['198.18.0.12', 'worker-2'] },
];

function request(node: string, dnsNames: string[], ipAddresses: string[], overrides: Partial<CsrRequestFacts> = {}): CsrRequestFacts {
  return {
    commonNames: [`system:node:${node}`],
    organizations: ['system:nodes'],
    dnsNames,
    ipAddresses,
    emailAddresses: [],
    uris: [],
    key: { algorithm: 'EC', bits: 256, curve: 'P-256' },
    signatureValid: true,
    ...overrides,
  };
}

/** worker-1 renewing its serving certificate with its own client certificate. */
function renewal(overrides: Partial<CsrFacts> = {}, requestOverrides: { node?: string; dns?: string[]; ips?: string[] } = {}): CsrFacts {
  const node = requestOverrides.node ?? 'worker-1';
  return {
    name: 'csr-renewal',
    signerName: KUBELET_SERVING_SIGNER,
    ...asNode(node),
    usages: ['digital signature', 'server auth'],
    createdAt: minutesAgo(1),
    state: 'PENDING',
    request: request(node, requestOverrides.dns ?? [node], requestOverrides.ips ?? [ipOf(node)]),
    ...overrides,
  };
}

function ipOf(node: string): string {
  return INVENTORY.find((entry) => entry.hostname === node)?.ips[0] ?? '198.18.0.99';
}

/** The serving certificate a node holds now, issued for it (by the join or an earlier renewal). */
function issued(node: string, name: string, dns: string[], ips: string[], validUntil = minutesFromNow(60 * 24 * 30)): CsrFacts {
  return {
    ...renewal({ name, state: 'APPROVED', createdAt: minutesAgo(60 * 24 * 300) }, { node, dns, ips }),
    certificate: { dnsNames: dns, ipAddresses: ips, notBefore: minutesAgo(60 * 24 * 300), notAfter: validUntil },
  };
}

const HELD = [issued('worker-1', 'csr-w1-held', ['worker-1'], ['198.18.0.11']), issued('worker-2', 'csr-w2-held', ['worker-2'], ['198.18.0.12'])];

function context(csrs: CsrFacts[] = HELD, overrides: Partial<CsrPolicyContext> = {}): CsrPolicyContext {
  return {
    settings: { bootstrapStyle: 'KUBEADM' },
    inventory: INVENTORY,
    clusterNodes: CLUSTER_NODES,
    csrs,
    now: NOW,
    clusterAddresses: [VIP, 'api.lab.example'],
    ...overrides,
  };
}

describe('CSR policy, renewal path: what it approves', () => {
  it('approves worker-1 renewing its serving certificate with exactly the names it holds, listing every renewal check as passed', () => {
    const csr = renewal();
    const verdict = evaluateCsr(csr, context([...HELD, csr]));
    expect(verdict.decision).toBe('APPROVE');
    expect(verdict.path).toBe('RENEWAL');
    expect(verdict.node).toBe('worker-1');
    expect(verdict.checks.map((check) => check.name)).toEqual(SERVING_RENEWAL_CSR_CHECKS);
    expect(verdict.checks.every((check) => check.passed)).toBe(true);
    expect(verdict.checks.find((check) => check.name === 'renewal-sans')?.detail).toContain('exactly what the current serving certificate of worker-1 names (from csr-w1-held');
  });

  it('compares with the newest valid certificate, in any case and IP spelling', () => {
    const newer = { ...issued('worker-1', 'csr-w1-newer', ['Worker-1'], ['198.18.0.11']), certificate: { dnsNames: ['Worker-1'], ipAddresses: ['198.18.0.11'], notBefore: minutesAgo(10), notAfter: minutesFromNow(600) } };
    const verdict = evaluateCsr(renewal({}, { dns: ['WORKER-1'] }), context([...HELD, newer]));
    expect(verdict.decision).toBe('APPROVE');
    expect(verdict.checks.find((check) => check.name === 'renewal-sans')?.detail).toContain('csr-w1-newer');
  });

  it('without a readable current certificate, approves a subset of the inventory hostname and addresses', () => {
    for (const [dns, ips] of [[['worker-1'], ['198.18.0.11']], [['worker-1'], []], [[], ['198.18.0.11']]] as const) {
      const verdict = evaluateCsr(renewal({}, { dns: [...dns], ips: [...ips] }), context([]));
      expect(verdict.decision, `${dns.join()} ${ips.join()}`).toBe('APPROVE');
      expect(verdict.checks.find((check) => check.name === 'renewal-sans')?.detail).toContain('no current serving certificate');
    }
  });

  it('ignores an expired certificate as the current one', () => {
    const expired = issued('worker-1', 'csr-w1-expired', ['worker-1', 'old-name'], ['198.18.0.11'], minutesAgo(5));
    const verdict = evaluateCsr(renewal(), context([expired, HELD[1]]));
    expect(verdict.decision).toBe('APPROVE');
  });

  it('keeps the join path for a node being installed: its first serving certificate is the join path\'s', () => {
    const client: CsrFacts = {
      name: 'csr-w4-client', signerName: KUBELET_CLIENT_SIGNER, ...identityRequester('worker-4'), usages: ['digital signature', 'client auth'],
      createdAt: minutesAgo(1), state: 'APPROVED', request: request('worker-4', [], []),
      certificate: { credentialId: 'X509SHA256=w4-client', dnsNames: [], ipAddresses: [], notBefore: minutesAgo(1), notAfter: minutesFromNow(60) },
    };
    // Filed with the client certificate the run's client CSR was issued.
    const verdict = evaluateCsr(renewal({ credentialId: 'X509SHA256=w4-client' }, { node: 'worker-4' }), context([...HELD, client]));
    expect(verdict.path).toBe('JOIN');
    expect(verdict.decision).toBe('APPROVE');
  });
});

function identityRequester(hostname: string): Pick<CsrFacts, 'username' | 'uid' | 'groups'> {
  return { ...identity(hostname), groups: ['system:serviceaccounts', 'system:serviceaccounts:ccos-scaler-bootstrap', 'system:authenticated'] };
}

interface HostileRenewal {
  readonly csr: CsrFacts;
  readonly context?: CsrPolicyContext;
  readonly check: string;
  readonly reason: string;
  /** Whether an ADMIN's forced approval may go past it. */
  readonly overridable: boolean;
}

const HOSTILE: Record<string, HostileRenewal> = {
  'worker-1 asking for a serving certificate in worker-2\'s name': {
    csr: renewal(asNode('worker-1'), { node: 'worker-2' }),
    check: 'requester',
    reason: 'requested by system:node:worker-1, but the subject names another node',
    // worker-2 was installed here with an identity of its own.
    overridable: false,
  },
  'worker-1 asking for a serving certificate in a name this service does not know': {
    csr: renewal(asNode('worker-1'), { node: 'not-me' }),
    check: 'requester',
    reason: 'requested by system:node:worker-1, but the subject names another node',
    overridable: false,
  },
  'worker-1 adding worker-2\'s address': {
    csr: renewal({}, { ips: ['198.18.0.11', '198.18.0.12'] }),
    check: 'no-other-node-address',
    reason: '198.18.0.12 (worker-2) belongs to another node; worker-1 may only name itself',
    overridable: true,
  },
  'worker-1 adding worker-2\'s hostname': {
    csr: renewal({}, { dns: ['worker-1', 'worker-2'] }),
    check: 'no-other-node-address',
    reason: 'worker-2 (worker-2) belongs to another node',
    // A name not the node's own: san-dns, which nothing overrides.
    overridable: false,
  },
  'worker-1 adding a master\'s address (a Node of the cluster, not in the inventory)': {
    csr: renewal({}, { ips: ['198.18.0.11', '198.18.0.10'] }),
    check: 'no-other-node-address',
    reason: '198.18.0.10 (master-0) belongs to another node',
    overridable: true,
  },
  'worker-1 adding a foreign IP': {
    csr: renewal({}, { ips: ['198.18.0.11', '10.0.0.66'] }),
    check: 'renewal-sans',
    reason: 'the renewal adds 10.0.0.66; a renewal must name exactly what the current serving certificate of worker-1 (from csr-w1-held) names: [worker-1, 198.18.0.11]',
    overridable: true,
  },
  'worker-1 adding a foreign IP, with no current certificate to compare with': {
    csr: renewal({}, { ips: ['198.18.0.11', '10.0.0.66'] }),
    context: context([]),
    check: 'renewal-sans',
    reason: '10.0.0.66 is not the hostname or an address of worker-1 in the inventory ([worker-1, 198.18.0.11])',
    overridable: true,
  },
  'worker-1 dropping its hostname': {
    csr: renewal({}, { dns: [] }),
    check: 'renewal-sans',
    reason: 'the renewal drops worker-1',
    overridable: true,
  },
  'worker-1 adding the cluster VIP': {
    csr: renewal({}, { ips: ['198.18.0.11', VIP] }),
    check: 'no-cluster-address',
    reason: `${VIP} is an address of the cluster itself (VIP, API server, the kubernetes Service or its in-cluster names)`,
    overridable: false,
  },
  'worker-1 adding the API server\'s host name': {
    csr: renewal({}, { dns: ['worker-1', 'API.lab.example'] }),
    check: 'no-cluster-address',
    reason: 'api.lab.example is an address of the cluster itself',
    overridable: false,
  },
  'a node this service did not join (not in the inventory)': {
    csr: renewal({}, { node: 'worker-9' }),
    check: 'joined-here',
    reason: 'worker-9 is not a node of this cluster in the inventory; this service did not join it, so renewing its serving certificate is left for an operator',
    overridable: true,
  },
  'a node in the inventory whose install failed': {
    csr: renewal({}, { node: 'worker-3' }),
    check: 'joined-here',
    reason: 'worker-3 is not joined in the inventory; only nodes this service joined have their serving certificates renewed automatically',
    overridable: true,
  },
  'a second pending renewal for worker-1': {
    csr: renewal({ name: 'csr-renewal-b', createdAt: minutesAgo(0.5) }),
    context: context([...HELD, renewal({ name: 'csr-renewal-a' })]),
    check: 'single-pending-renewal',
    reason: 'another renewal for worker-1 is pending (csr-renewal-a); at most one pending renewal per node is auto-approved, so an operator has to choose',
    overridable: true,
  },
  'the first of two pending renewals for worker-1': {
    csr: renewal({ name: 'csr-renewal-a' }),
    context: context([...HELD, renewal({ name: 'csr-renewal-b', createdAt: minutesAgo(0.5) })]),
    check: 'single-pending-renewal',
    reason: 'another renewal for worker-1 is pending (csr-renewal-b)',
    overridable: true,
  },
  'a renewal filed by a bootstrap identity, not the node': {
    csr: renewal({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] }),
    check: 'requester',
    reason: 'a serving certificate must be requested by the node itself',
    overridable: false,
  },
  'a renewal without the system:nodes group': {
    csr: renewal({ groups: ['system:authenticated'] }),
    check: 'requester',
    reason: 'without the group system:nodes',
    overridable: false,
  },
  'a renewal asking for client auth too': {
    csr: renewal({ usages: ['digital signature', 'server auth', 'client auth'] }),
    check: 'usages',
    reason: 'not allowed: client auth',
    overridable: false,
  },
  'a renewal with a wildcard name': {
    csr: renewal({}, { dns: ['*.apps.example.com'] }),
    check: 'san-form',
    reason: 'is not a host name',
    overridable: false,
  },
};

describe('CSR policy, renewal path: hostile renewals stay pending with the check named', () => {
  it.each(Object.entries(HOSTILE))('%s', (_title, { csr, context: given, check, reason, overridable }) => {
    const verdict = evaluateCsr(csr, given ?? context());
    expect(verdict.decision).toBe('LEAVE_PENDING');
    expect(verdict.path).toBe('RENEWAL');
    expect(verdict.checks.map((entry) => entry.name)).toEqual(SERVING_RENEWAL_CSR_CHECKS);
    const failed = verdict.checks.find((entry) => entry.name === check);
    expect(failed?.passed, `${check} fails`).toBe(false);
    expect(failed?.detail).toContain(reason);
    expect(forceBlockers(verdict).length === 0, 'whether force may go past it').toBe(overridable);
  });

  it('never denies a renewal: the kubelet keeps its certificate and an operator decides', () => {
    const csrs = [...HELD, ...Object.values(HOSTILE).map((entry, index) => ({ ...entry.csr, name: `csr-hostile-${index}` }))];
    const decisions = new Set([...evaluatePendingCsrs(context(csrs)).values()].map((verdict) => verdict.decision));
    expect([...decisions]).toEqual(['LEAVE_PENDING']);
  });
});

describe('CSR policy: a node renewing its own client certificate', () => {
  it('is left to the cluster\'s own approver (selfnodeclient), with that explanation', () => {
    const csr: CsrFacts = {
      name: 'csr-client-renewal', signerName: KUBELET_CLIENT_SIGNER, ...asNode('worker-1'), usages: ['digital signature', 'client auth'],
      createdAt: minutesAgo(1), state: 'PENDING', request: request('worker-1', [], []),
    };
    const verdict = evaluateCsr(csr, context());
    expect(verdict.decision).toBe('LEAVE_TO_CLUSTER');
    expect(verdict.reason).toContain('renewed by the cluster\'s own approver (selfnodeclient)');
    expect(verdict.checks.map((check) => check.name)).toEqual(CLIENT_CSR_CHECKS);
  });

  it('is not, when one node asks for another node\'s client certificate', () => {
    const csr: CsrFacts = {
      name: 'csr-client-other', signerName: KUBELET_CLIENT_SIGNER, ...asNode('worker-1'), usages: ['digital signature', 'client auth'],
      createdAt: minutesAgo(1), state: 'PENDING', request: request('worker-2', [], []),
    };
    const verdict = evaluateCsr(csr, context());
    expect(verdict.decision).not.toBe('LEAVE_TO_CLUSTER');
    expect(verdict.decision).not.toBe('APPROVE');
  });
});
