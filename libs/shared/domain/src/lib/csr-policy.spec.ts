import { describe, expect, it } from 'vitest';
import {
  type ClusterNodeFacts, type CsrFacts, type CsrPolicyContext, type CsrRequestFacts, type InventoryNodeFacts,
  CLIENT_CSR_CHECKS, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, OPENSHIFT_NODE_BOOTSTRAPPER, SERVING_CSR_CHECKS,
  canonicalIp, evaluateCsr, evaluatePendingCsrs,
} from './csr-policy';

const NOW = new Date('2025-06-01T12:00:00Z');
const minutesAgo = (minutes: number): Date => new Date(NOW.getTime() - minutes * 60_000);

const EC_KEY = { algorithm: 'EC', bits: 256, curve: 'P-256' } as const;

function request(overrides: Partial<CsrRequestFacts> = {}): CsrRequestFacts {
  return {
    commonNames: ['system:node:worker-1'],
    organizations: ['system:nodes'],
    dnsNames: [],
    ipAddresses: [],
    emailAddresses: [],
    uris: [],
    key: EC_KEY,
    signatureValid: true,
    ...overrides,
  };
}

/** A client CSR as the OpenShift node-bootstrapper makes it for worker-1, a minute ago. */
function clientCsr(overrides: Partial<CsrFacts> = {}, requestOverrides: Partial<CsrRequestFacts> = {}): CsrFacts {
  return {
    name: 'csr-client',
    signerName: KUBELET_CLIENT_SIGNER,
    username: OPENSHIFT_NODE_BOOTSTRAPPER,
    groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'],
    usages: ['digital signature', 'client auth'],
    createdAt: minutesAgo(1),
    state: 'PENDING',
    request: request(requestOverrides),
    ...overrides,
  };
}

/** worker-1's serving CSR, after its client CSR was approved. */
function servingCsr(overrides: Partial<CsrFacts> = {}, requestOverrides: Partial<CsrRequestFacts> = {}): CsrFacts {
  return {
    name: 'csr-serving',
    signerName: KUBELET_SERVING_SIGNER,
    username: 'system:node:worker-1',
    groups: ['system:nodes', 'system:authenticated'],
    usages: ['digital signature', 'server auth'],
    createdAt: minutesAgo(1),
    state: 'PENDING',
    request: request({ dnsNames: ['worker-1'], ipAddresses: ['198.18.0.11'], ...requestOverrides }),
    ...overrides,
  };
}

const APPROVED_CLIENT = clientCsr({ name: 'csr-client-approved', state: 'APPROVED', createdAt: minutesAgo(3) });

const INVENTORY: InventoryNodeFacts[] = [
  { hostname: 'worker-1', ips: ['198.18.0.11', '2001:db8::11'], installRun: { status: 'RUNNING', kubeletStartedAt: minutesAgo(5) } },
  { hostname: 'worker-2', ips: ['198.18.0.12'], installRun: { status: 'SUCCEEDED', kubeletStartedAt: minutesAgo(24 * 60) } },
  { hostname: 'worker-3', ips: ['198.18.0.13'], installRun: null },
  { hostname: 'worker-4', ips: ['198.18.0.14'], installRun: { status: 'RUNNING', kubeletStartedAt: minutesAgo(120) } },
  { hostname: 'worker-5', ips: ['198.18.0.15'], installRun: { status: 'RUNNING', kubeletStartedAt: null } },
];

const CLUSTER_NODES: ClusterNodeFacts[] = [
  { name: 'master-0', ready: true, validClientCertificate: true },
  { name: 'worker-2', ready: true, validClientCertificate: true },
];

function context(overrides: Partial<CsrPolicyContext> = {}, csrs: CsrFacts[] = []): CsrPolicyContext {
  return { settings: { bootstrapStyle: 'OPENSHIFT' }, inventory: INVENTORY, clusterNodes: CLUSTER_NODES, csrs, now: NOW, ...overrides };
}

interface Case {
  readonly csr: CsrFacts;
  readonly context?: CsrPolicyContext;
  /** The check that must fail. */
  readonly check: string;
  /** Text the shown reason must contain. */
  readonly reason: string;
}

const servingContext = context({}, [APPROVED_CLIENT]);

const HOSTILE: Record<string, Case> = {
  'wrong signer (kube-apiserver-client)': {
    csr: clientCsr({ signerName: 'kubernetes.io/kube-apiserver-client' }),
    check: 'signer',
    reason: 'signer kubernetes.io/kube-apiserver-client is not a kubelet signer',
  },
  'another signer (legacy-unknown)': {
    csr: clientCsr({ signerName: 'kubernetes.io/legacy-unknown' }),
    check: 'signer',
    reason: 'signer kubernetes.io/legacy-unknown is not a kubelet signer',
  },
  'wrong usages (server auth on a client CSR)': {
    csr: clientCsr({ usages: ['digital signature', 'server auth'] }),
    check: 'usages',
    reason: 'usages [digital signature, server auth]: missing client auth; not allowed: server auth',
  },
  'an extra usage (client CSR also asking for server auth)': {
    csr: clientCsr({ usages: ['digital signature', 'client auth', 'server auth'] }),
    check: 'usages',
    reason: 'not allowed: server auth; a kubelet asks for exactly digital signature, client auth',
  },
  'key encipherment with an ECDSA key': {
    csr: clientCsr({ usages: ['digital signature', 'key encipherment', 'client auth'] }),
    check: 'usages',
    reason: 'not allowed: key encipherment (only with an RSA key; this key is EC)',
  },
  'a repeated usage': {
    csr: clientCsr({ usages: ['digital signature', 'client auth', 'client auth'] }),
    check: 'usages',
    reason: 'repeated: client auth',
  },
  'CN of another node (a master, by the bootstrap identity)': {
    csr: clientCsr({}, { commonNames: ['system:node:master-0'] }),
    check: 'inventory',
    reason: 'master-0 is not a node of this cluster in the inventory',
  },
  'CN of another node (serving CSR of worker-1 naming worker-3)': {
    csr: servingCsr({}, { commonNames: ['system:node:worker-3'], dnsNames: ['worker-3'], ipAddresses: ['198.18.0.13'] }),
    context: servingContext,
    check: 'requester',
    reason: 'requested by system:node:worker-1, but the subject names another node',
  },
  'CN not of the form system:node:<name>': {
    csr: clientCsr({}, { commonNames: ['kube-admin'] }),
    check: 'subject-common-name',
    reason: 'CN "kube-admin" is not of the form system:node:<name>',
  },
  'two CN attributes': {
    csr: clientCsr({}, { commonNames: ['system:node:worker-1', 'system:node:master-0'] }),
    check: 'subject-common-name',
    reason: 'the subject has 2 CN attributes; exactly one (system:node:<name>) is required',
  },
  'a node name that is not a host name': {
    csr: clientCsr({}, { commonNames: ['system:node:Worker_1;reboot'] }),
    check: 'subject-common-name',
    reason: 'is not a valid RFC 1123 label',
  },
  'O other than system:nodes': {
    csr: clientCsr({}, { organizations: ['system:masters'] }),
    check: 'subject-organization',
    reason: 'O is [system:masters]; exactly [system:nodes] is required',
  },
  'an extra O (system:masters besides system:nodes)': {
    csr: clientCsr({}, { organizations: ['system:nodes', 'system:masters'] }),
    check: 'subject-organization',
    reason: 'O is [system:nodes, system:masters]; exactly [system:nodes] is required',
  },
  'requester neither the bootstrap identity nor the node': {
    csr: clientCsr({ username: 'alice', groups: ['system:authenticated'] }),
    check: 'requester',
    reason: 'requested by alice, which is neither the bootstrap identity (system:serviceaccount:openshift-machine-config-operator:node-bootstrapper) nor the node itself',
  },
  'another service account of the same namespace': {
    csr: clientCsr({ username: 'system:serviceaccount:openshift-machine-config-operator:default' }),
    check: 'requester',
    reason: 'requested by system:serviceaccount:openshift-machine-config-operator:default, which is neither the bootstrap identity',
  },
  'a kubeadm bootstrap token requester in an OPENSHIFT cluster': {
    csr: clientCsr({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] }),
    check: 'requester',
    reason: 'requested by system:bootstrap:abcdef, a KUBEADM bootstrap identity; this OPENSHIFT cluster\'s bootstrap identity is system:serviceaccount:openshift-machine-config-operator:node-bootstrapper',
  },
  'the OpenShift node-bootstrapper in a KUBEADM cluster': {
    csr: clientCsr(),
    context: context({ settings: { bootstrapStyle: 'KUBEADM' } }),
    check: 'requester',
    reason: 'a OPENSHIFT bootstrap identity; this KUBEADM cluster\'s bootstrap identity is system:bootstrap:<token-id> in group system:bootstrappers',
  },
  'a bootstrap-token user name without the system:bootstrappers group': {
    csr: clientCsr({ username: 'system:bootstrap:abcdef', groups: ['system:authenticated'] }),
    context: context({ settings: { bootstrapStyle: 'KUBEADM' } }),
    check: 'requester',
    reason: 'requested by system:bootstrap:abcdef, which is neither the bootstrap identity',
  },
  'a client CSR for worker-1 requested by node worker-2': {
    csr: clientCsr({ username: 'system:node:worker-2', groups: ['system:nodes', 'system:authenticated'] }),
    check: 'requester',
    reason: 'requested by system:node:worker-2, which is not the node the certificate is for',
  },
  'a SAN IP not in the inventory': {
    csr: servingCsr({}, { ipAddresses: ['198.18.0.11', '10.96.0.1'] }),
    context: servingContext,
    check: 'san-ip',
    reason: 'IP address 10.96.0.1 is not an address of worker-1 in the inventory ([198.18.0.11, 2001:db8::11])',
  },
  'the node\'s IPv4 address as an IPv4-mapped IPv6 SAN': {
    csr: servingCsr({}, { ipAddresses: ['::ffff:198.18.0.11'] }),
    context: servingContext,
    check: 'san-ip',
    reason: 'IP address ::ffff:198.18.0.11 is not an address of worker-1',
  },
  'a SAN DNS name not in the inventory': {
    csr: servingCsr({}, { dnsNames: ['worker-1', 'kubernetes.default.svc'] }),
    context: servingContext,
    check: 'san-dns',
    reason: 'DNS name kubernetes.default.svc is not the hostname of worker-1 in the inventory',
  },
  'a wildcard SAN DNS name': {
    csr: servingCsr({}, { dnsNames: ['*.apps.prod.example.com'] }),
    context: servingContext,
    check: 'san-dns',
    reason: 'DNS name *.apps.prod.example.com is not the hostname of worker-1',
  },
  'an email SAN': {
    csr: servingCsr({}, { emailAddresses: ['admin@example.com'] }),
    context: servingContext,
    check: 'san-other',
    reason: 'a serving certificate may name only DNS names and IPs; found email admin@example.com',
  },
  'a URI SAN': {
    csr: servingCsr({}, { uris: ['spiffe://cluster.local/ns/kube-system/sa/admin'] }),
    context: servingContext,
    check: 'san-other',
    reason: 'found URI spiffe://cluster.local/ns/kube-system/sa/admin',
  },
  'a directory-name SAN': {
    csr: servingCsr({}, { otherNames: ['dn:CN=admin'] }),
    context: servingContext,
    check: 'san-other',
    reason: 'found name dn:CN=admin',
  },
  'a client CSR with a registered-ID SAN': {
    csr: clientCsr({}, { otherNames: ['id:1.2.3.4'] }),
    check: 'no-sans',
    reason: 'found name id:1.2.3.4',
  },
  'a serving CSR without any SAN': {
    csr: servingCsr({}, { dnsNames: [], ipAddresses: [] }),
    context: servingContext,
    check: 'san-dns',
    reason: 'a serving certificate needs at least one DNS name or IP address',
  },
  'a node that is not being installed (installed yesterday)': {
    csr: clientCsr({}, { commonNames: ['system:node:worker-2'] }),
    context: context({ clusterNodes: [] }),
    check: 'install-run',
    reason: 'worker-2 is not being installed (its last install run is succeeded); only nodes in an active install run are auto-approved',
  },
  'a node that was never installed': {
    csr: clientCsr({}, { commonNames: ['system:node:worker-3'] }),
    check: 'install-run',
    reason: 'worker-3 is not being installed (it has never been installed)',
  },
  'a node whose kubelet has not been started yet': {
    csr: clientCsr({}, { commonNames: ['system:node:worker-5'] }),
    check: 'approval-window',
    reason: 'the kubelet of worker-5 has not been started by an install run (no START_KUBELET step yet)',
  },
  'outside the approval window (kubelet started two hours ago)': {
    csr: clientCsr({}, { commonNames: ['system:node:worker-4'] }),
    check: 'approval-window',
    reason: 'the approval window of worker-4 closed at 2025-06-01T11:00:00.000Z (60 min after its kubelet started)',
  },
  'created before the kubelet was started': {
    csr: clientCsr({ createdAt: minutesAgo(30) }),
    check: 'approval-window',
    reason: 'created at 2025-06-01T11:30:00.000Z, before the kubelet of worker-1 was started (2025-06-01T11:55:00.000Z)',
  },
  'an older pending CSR while a newer, forged one for the same node is pending': {
    csr: clientCsr({ name: 'csr-old', createdAt: minutesAgo(2) }),
    context: context({}, [clientCsr({ name: 'csr-new', usages: ['digital signature', 'client auth', 'server auth'] })]),
    check: 'single-pending',
    reason: 'another pending CSR for worker-1 with this signer exists (csr-new, newer, not approvable: usages',
  },
  'a second client certificate in the same install': {
    csr: clientCsr(),
    context: context({}, [APPROVED_CLIENT]),
    check: 'first-of-install',
    reason: 'a client certificate for worker-1 was already approved during this install (csr-client-approved); another one needs an operator',
  },
  'a node already Ready with a valid client certificate': {
    csr: clientCsr(),
    context: context({ clusterNodes: [{ name: 'worker-1', ready: true, validClientCertificate: true }] }),
    check: 'not-joined',
    reason: 'worker-1 is already a Ready node with a valid client certificate',
  },
  'an unparsable request': {
    csr: clientCsr({ request: null, parseError: 'Cannot parse PEM: no CERTIFICATE REQUEST block' }),
    check: 'request',
    reason: 'the request is not a parsable PKCS#10 certificate request (Cannot parse PEM: no CERTIFICATE REQUEST block)',
  },
  'a bad signature': {
    csr: clientCsr({}, { signatureValid: false }),
    check: 'signature',
    reason: 'the request signature does not verify with its public key',
  },
  'an RSA-1024 key': {
    csr: clientCsr({ usages: ['digital signature', 'key encipherment', 'client auth'] }, { key: { algorithm: 'RSA', bits: 1024, curve: null } }),
    check: 'key',
    reason: 'RSA key of 1024 bits is too weak; at least 2048 bits are required',
  },
  'an ECDSA P-521 key': {
    csr: clientCsr({}, { key: { algorithm: 'EC', bits: 521, curve: 'P-521' } }),
    check: 'key',
    reason: 'ECDSA curve P-521 is not accepted; only P-256 and P-384 are',
  },
  'an Ed25519 key': {
    csr: clientCsr({}, { key: { algorithm: 'Ed25519', bits: null, curve: null } }),
    check: 'key',
    reason: 'Ed25519 keys are not accepted',
  },
  'a serving CSR requested by the bootstrap identity': {
    csr: servingCsr({ username: OPENSHIFT_NODE_BOOTSTRAPPER, groups: ['system:serviceaccounts', 'system:authenticated'] }),
    context: servingContext,
    check: 'requester',
    reason: 'requested by system:serviceaccount:openshift-machine-config-operator:node-bootstrapper; a serving certificate must be requested by the node itself',
  },
  'a serving CSR from a node identity without the system:nodes group': {
    csr: servingCsr({ groups: ['system:authenticated'] }),
    context: servingContext,
    check: 'requester',
    reason: 'requested by system:node:worker-1 without the group system:nodes',
  },
  'a client CSR with SANs': {
    csr: clientCsr({}, { dnsNames: ['worker-1'], ipAddresses: ['198.18.0.11'] }),
    check: 'no-sans',
    reason: 'a client certificate must not carry subject alternative names; found DNS worker-1, IP 198.18.0.11',
  },
  'a serving CSR for a node whose client CSR was never approved': {
    csr: servingCsr(),
    check: 'client-bootstrapped',
    reason: 'no client CSR of worker-1 was approved during this install; its client certificate did not come from this install',
  },
  'a serving CSR whose client CSR was approved before this install': {
    csr: servingCsr(),
    context: context({}, [clientCsr({ name: 'csr-last-year', state: 'APPROVED', createdAt: minutesAgo(60 * 24 * 365) })]),
    check: 'client-bootstrapped',
    reason: 'no client CSR of worker-1 was approved during this install',
  },
  'a serving CSR with client auth': {
    csr: servingCsr({ usages: ['digital signature', 'server auth', 'client auth'] }),
    context: servingContext,
    check: 'usages',
    reason: 'not allowed: client auth; a kubelet asks for exactly digital signature, server auth',
  },
  'a CSR that is already denied': {
    csr: clientCsr({ state: 'DENIED' }),
    check: 'pending',
    reason: 'the CSR is already denied; nothing to decide',
  },
};

describe('CSR policy: hostile or wrong CSRs stay pending', () => {
  it('has at least 20 of them', () => {
    expect(Object.keys(HOSTILE).length).toBeGreaterThanOrEqual(20);
  });

  it.each(Object.entries(HOSTILE))('%s', (_title, { csr, context: given, check, reason }) => {
    const verdict = evaluateCsr(csr, given ?? context());
    expect(verdict.decision).toBe('LEAVE_PENDING');
    expect(verdict.reason).toContain(reason);
    const failed = verdict.checks.find((entry) => entry.name === check);
    expect(failed, `check ${check} is listed`).toBeDefined();
    expect(failed?.passed).toBe(false);
    expect(failed?.detail).toContain(reason);
    // Every check is listed, passed or not, in a fixed order per signer.
    const names = verdict.checks.map((entry) => entry.name);
    if (verdict.kind === 'CLIENT') {
      expect(names).toEqual(CLIENT_CSR_CHECKS);
    } else if (verdict.kind === 'SERVING') {
      expect(names).toEqual(SERVING_CSR_CHECKS);
    } else {
      expect(names).toEqual(CLIENT_CSR_CHECKS.slice(0, 5));
    }
  });

  it('lists every check of an unparsable request as failed or not evaluated, not just the first', () => {
    const verdict = evaluateCsr(clientCsr({ request: null }), context());
    const notEvaluated = verdict.checks.filter((entry) => entry.detail === 'not evaluated: the request could not be parsed').map((entry) => entry.name);
    expect(notEvaluated).toEqual(['signature', 'key', 'subject-common-name', 'subject-organization', 'no-sans']);
    expect(verdict.node).toBeNull();
  });
});

describe('CSR policy: what it approves', () => {
  it('approves worker-1\'s client CSR from the OpenShift node-bootstrapper, listing every check as passed', () => {
    const verdict = evaluateCsr(clientCsr(), context());
    expect(verdict).toMatchObject({ decision: 'APPROVE', node: 'worker-1', kind: 'CLIENT', reason: `all ${CLIENT_CSR_CHECKS.length} checks passed` });
    expect(verdict.checks.map((check) => check.name)).toEqual(CLIENT_CSR_CHECKS);
    expect(verdict.checks.every((check) => check.passed)).toBe(true);
    expect(verdict.checks.find((check) => check.name === 'requester')?.detail).toBe(`requested by the bootstrap identity ${OPENSHIFT_NODE_BOOTSTRAPPER}`);
  });

  it('approves a kubeadm bootstrap-token requester in a KUBEADM cluster', () => {
    const csr = clientCsr({ username: 'system:bootstrap:07401b', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'] });
    expect(evaluateCsr(csr, context({ settings: { bootstrapStyle: 'KUBEADM' } })).decision).toBe('APPROVE');
  });

  it('approves a client CSR the node makes with its own identity while it is being installed (kubelet restart)', () => {
    const csr = clientCsr({ username: 'system:node:worker-1', groups: ['system:nodes', 'system:authenticated'] });
    const verdict = evaluateCsr(csr, context());
    expect(verdict.decision).toBe('APPROVE');
    expect(verdict.checks.find((check) => check.name === 'requester')?.detail).toBe('requested by the node itself (system:node:worker-1): a renewal');
  });

  it('approves an RSA-2048 key with key encipherment, and without it', () => {
    const rsa = { key: { algorithm: 'RSA', bits: 2048, curve: null } };
    expect(evaluateCsr(clientCsr({ usages: ['digital signature', 'key encipherment', 'client auth'] }, rsa), context()).decision).toBe('APPROVE');
    expect(evaluateCsr(clientCsr({}, rsa), context()).decision).toBe('APPROVE');
  });

  it('approves an ECDSA P-384 key', () => {
    expect(evaluateCsr(clientCsr({}, { key: { algorithm: 'EC', bits: 384, curve: 'P-384' } }), context()).decision).toBe('APPROVE');
  });

  it('approves worker-1\'s serving CSR with its hostname and IPs (any IPv6 spelling, any case)', () => {
    const csr = servingCsr({}, { dnsNames: ['WORKER-1'], ipAddresses: ['198.18.0.11', '2001:0DB8:0:0:0:0:0:11'] });
    const verdict = evaluateCsr(csr, servingContext);
    expect(verdict).toMatchObject({ decision: 'APPROVE', node: 'worker-1', kind: 'SERVING' });
    expect(verdict.checks.map((check) => check.name)).toEqual(SERVING_CSR_CHECKS);
  });

  it('approves the serving CSR right after the install run succeeded (the Node turned Ready first)', () => {
    const inventory = INVENTORY.map((node) => (node.hostname === 'worker-1' ? { ...node, installRun: { status: 'SUCCEEDED' as const, kubeletStartedAt: minutesAgo(5) } } : node));
    const verdict = evaluateCsr(servingCsr(), context({ inventory, clusterNodes: [{ name: 'worker-1', ready: true, validClientCertificate: true }] }, [APPROVED_CLIENT]));
    expect(verdict.decision).toBe('APPROVE');
  });

  it('honours a configured approval window and clock skew', () => {
    const late = clientCsr({}, { commonNames: ['system:node:worker-4'] });
    expect(evaluateCsr(late, context({ settings: { bootstrapStyle: 'OPENSHIFT', approvalWindowMs: 3 * 3600_000 } })).decision).toBe('APPROVE');
    const early = clientCsr({ createdAt: minutesAgo(6) });
    expect(evaluateCsr(early, context()).decision).toBe('APPROVE');
    expect(evaluateCsr(early, context({ settings: { bootstrapStyle: 'OPENSHIFT', clockSkewMs: 0 } })).reason).toContain('before the kubelet of worker-1 was started');
  });
});

describe('CSR policy: one pending CSR per node and signer', () => {
  const older = clientCsr({ name: 'csr-older', createdAt: minutesAgo(3) });
  const newer = clientCsr({ name: 'csr-newer', createdAt: minutesAgo(1) });

  it('approves the newest and denies the older as superseded, with the reason', () => {
    const ctx = context({}, [older, newer]);
    expect(evaluateCsr(newer, ctx)).toMatchObject({ decision: 'APPROVE' });
    expect(evaluateCsr(newer, ctx).checks.find((check) => check.name === 'single-pending')?.detail).toBe(
      'the newest of 2 pending CSRs for worker-1 with this signer; it supersedes csr-older',
    );
    const verdict = evaluateCsr(older, ctx);
    expect(verdict.decision).toBe('DENY_SUPERSEDED');
    expect(verdict.reason).toBe('superseded by the newer CSR csr-newer (created 2025-06-01T11:59:00.000Z) for worker-1 with the same signer');
    expect(evaluatePendingCsrs(ctx)).toEqual(new Map([['csr-older', verdict], ['csr-newer', evaluateCsr(newer, ctx)]]));
  });

  it('denies an older forged duplicate as superseded too', () => {
    const forged = clientCsr({ name: 'csr-forged', createdAt: minutesAgo(2), usages: ['digital signature', 'client auth', 'server auth'] });
    expect(evaluateCsr(forged, context({}, [forged, newer])).decision).toBe('DENY_SUPERSEDED');
  });

  it('breaks a tie in creation time by name, the same way on every replica', () => {
    const a = clientCsr({ name: 'csr-a', createdAt: minutesAgo(1) });
    const b = clientCsr({ name: 'csr-b', createdAt: minutesAgo(1) });
    const ctx = context({}, [a, b]);
    expect([evaluateCsr(a, ctx).decision, evaluateCsr(b, ctx).decision]).toEqual(['DENY_SUPERSEDED', 'APPROVE']);
  });

  it('keeps client and serving CSRs of one node apart', () => {
    const serving = servingCsr();
    const ctx = context({}, [APPROVED_CLIENT, serving]);
    expect(evaluateCsr(serving, ctx).decision).toBe('APPROVE');
  });

  it('skips CSRs that are not pending', () => {
    expect([...evaluatePendingCsrs(context({}, [APPROVED_CLIENT, clientCsr()])).keys()]).toEqual(['csr-client']);
  });
});

describe('canonicalIp', () => {
  it.each([
    ['2001:db8::11', '2001:db8:0:0:0:0:0:11'],
    ['2001:0DB8:0000::0011', '2001:db8:0:0:0:0:0:11'],
    ['::1', '0:0:0:0:0:0:0:1'],
    ['::', '0:0:0:0:0:0:0:0'],
    ['::ffff:198.18.0.11', '0:0:0:0:0:ffff:c612:b'],
    ['64:ff9b::198.18.0.11', '64:ff9b:0:0:0:0:c612:b'],
    ['198.18.0.11', '198.18.0.11'],
  ])('%s → %s', (input, expected) => {
    expect(canonicalIp(input)).toBe(expected);
  });
});
