import { describe, expect, it } from 'vitest';
import {
  type ClusterNodeFacts, type CsrFacts, type CsrPolicyContext, type CsrRequestFacts, type InventoryNodeFacts, type RunBootstrapIdentity,
  CLIENT_CSR_CHECKS, CSR_CHECK_OVERRIDES, FORCE_REASON_MAX_LENGTH, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, OPENSHIFT_NODE_BOOTSTRAPPER, SERVING_CSR_CHECKS, SERVING_RENEWAL_CSR_CHECKS,
  canonicalIp, checkForceReason, evaluateCsr, evaluatePendingCsrs, forceBlockers, isImpostor,
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

const BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';
const SA_GROUPS = ['system:serviceaccounts', `system:serviceaccounts:${BOOTSTRAP_NAMESPACE}`, 'system:authenticated'];

/** The bootstrap identity this service minted for the install run of `hostname`. */
function identityOf(hostname: string): RunBootstrapIdentity {
  return { username: `system:serviceaccount:${BOOTSTRAP_NAMESPACE}:run-${hostname}`, uid: `uid-run-${hostname}` };
}

/** Who files a CSR: `username`, `uid` and `groups` as the API server sets them. */
function requestedBy(identity: RunBootstrapIdentity, groups: string[] = SA_GROUPS): Pick<CsrFacts, 'username' | 'uid' | 'groups'> {
  return { username: identity.username, uid: identity.uid, groups };
}

const SHARED_OPENSHIFT_BOOTSTRAPPER = {
  username: OPENSHIFT_NODE_BOOTSTRAPPER,
  uid: 'uid-node-bootstrapper',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'],
};
const SHARED_BOOTSTRAP_TOKEN = { username: 'system:bootstrap:abcdef', uid: null, groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'] };

/** A client CSR as the kubelet of worker-1 makes it with its install run's own identity, a minute ago. */
function clientCsr(overrides: Partial<CsrFacts> = {}, requestOverrides: Partial<CsrRequestFacts> = {}): CsrFacts {
  return {
    name: 'csr-client',
    signerName: KUBELET_CLIENT_SIGNER,
    ...requestedBy(identityOf('worker-1')),
    usages: ['digital signature', 'client auth'],
    createdAt: minutesAgo(1),
    state: 'PENDING',
    request: request(requestOverrides),
    ...overrides,
  };
}

/** The client certificate issued to worker-1's install run, as the API server names it when it authenticates. */
const RUN_CLIENT_CERTIFICATE = 'X509SHA256=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0';

/** worker-1's serving CSR, filed with the client certificate its install run was issued. */
function servingCsr(overrides: Partial<CsrFacts> = {}, requestOverrides: Partial<CsrRequestFacts> = {}): CsrFacts {
  return {
    name: 'csr-serving',
    signerName: KUBELET_SERVING_SIGNER,
    username: 'system:node:worker-1',
    credentialId: RUN_CLIENT_CERTIFICATE,
    groups: ['system:nodes', 'system:authenticated'],
    usages: ['digital signature', 'server auth'],
    createdAt: minutesAgo(1),
    state: 'PENDING',
    request: request({ dnsNames: ['worker-1'], ipAddresses: ['198.18.0.11'], ...requestOverrides }),
    ...overrides,
  };
}

const APPROVED_CLIENT = clientCsr({
  name: 'csr-client-approved',
  state: 'APPROVED',
  createdAt: minutesAgo(3),
  certificate: { credentialId: RUN_CLIENT_CERTIFICATE, dnsNames: [], ipAddresses: [], notBefore: minutesAgo(3), notAfter: minutesAgo(-60 * 24 * 30) },
});

const INVENTORY: InventoryNodeFacts[] = [
  { hostname: 'worker-1', ips: ['198.18.0.11', '2001:db8::11'], installRun: { status: 'RUNNING', kubeletStartedAt: minutesAgo(5), bootstrapIdentity: identityOf('worker-1') } },
  { hostname: 'worker-2', ips: ['198.18.0.12'], installRun: { status: 'SUCCEEDED', kubeletStartedAt: minutesAgo(24 * 60), bootstrapIdentity: identityOf('worker-2') } },
  { hostname: 'worker-3', ips: ['198.18.0.13'], installRun: null },
  { hostname: 'worker-4', ips: ['198.18.0.14'], installRun: { status: 'RUNNING', kubeletStartedAt: minutesAgo(120), bootstrapIdentity: identityOf('worker-4') } },
  { hostname: 'worker-5', ips: ['198.18.0.15'], installRun: { status: 'RUNNING', kubeletStartedAt: null, bootstrapIdentity: identityOf('worker-5') } },
  // Installed before this service minted identities of its own.
  { hostname: 'worker-6', ips: ['198.18.0.16'], installRun: { status: 'RUNNING', kubeletStartedAt: minutesAgo(5), bootstrapIdentity: null } },
];

/** A node's own client CSR (kubelet restart with a valid certificate). */
const asNode = (hostname: string) => ({ username: `system:node:${hostname}`, uid: `uid-node-${hostname}`, groups: ['system:nodes', 'system:authenticated'] });

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
  /** Whether an ADMIN's forced approval may go past the failing check (every other check passing). */
  readonly overridable: boolean;
}

const servingContext = context({}, [APPROVED_CLIENT]);

const HOSTILE: Record<string, Case> = {
  'wrong signer (kube-apiserver-client)': {
    csr: clientCsr({ signerName: 'kubernetes.io/kube-apiserver-client' }),
    check: 'signer',
    reason: 'signer kubernetes.io/kube-apiserver-client is not a kubelet signer',
    overridable: false,
  },
  'another signer (legacy-unknown)': {
    csr: clientCsr({ signerName: 'kubernetes.io/legacy-unknown' }),
    check: 'signer',
    reason: 'signer kubernetes.io/legacy-unknown is not a kubelet signer',
    overridable: false,
  },
  'wrong usages (server auth on a client CSR)': {
    csr: clientCsr({ usages: ['digital signature', 'server auth'] }),
    check: 'usages',
    reason: 'usages [digital signature, server auth]: missing client auth; not allowed: server auth',
    overridable: false,
  },
  'an extra usage (client CSR also asking for server auth)': {
    csr: clientCsr({ usages: ['digital signature', 'client auth', 'server auth'] }),
    check: 'usages',
    reason: 'not allowed: server auth; a kubelet asks for exactly digital signature, client auth',
    overridable: false,
  },
  'key encipherment with an ECDSA key': {
    csr: clientCsr({ usages: ['digital signature', 'key encipherment', 'client auth'] }),
    check: 'usages',
    reason: 'not allowed: key encipherment (only with an RSA key; this key is EC)',
    overridable: false,
  },
  'a repeated usage': {
    csr: clientCsr({ usages: ['digital signature', 'client auth', 'client auth'] }),
    check: 'usages',
    reason: 'repeated: client auth',
    overridable: false,
  },
  'CN of a node this service does not know (a master, by the master itself)': {
    csr: clientCsr(asNode('master-0'), { commonNames: ['system:node:master-0'] }),
    // Not (yet) a Node of the cluster: as a Node it would be renewing, which the cluster approves.
    context: context({ clusterNodes: [] }),
    check: 'inventory',
    reason: 'master-0 is not a node of this cluster in the inventory',
    overridable: true,
  },
  'CN of a node this service does not know, by a shared bootstrap identity': {
    csr: clientCsr(SHARED_OPENSHIFT_BOOTSTRAPPER, { commonNames: ['system:node:master-0'] }),
    check: 'requester',
    reason: `requested by the shared bootstrap identity ${OPENSHIFT_NODE_BOOTSTRAPPER}; only the identity of the node's own install run is trusted, and the node is not in the inventory`,
    overridable: true,
  },
  'CN of another node (serving CSR of worker-1 naming worker-3)': {
    csr: servingCsr({}, { commonNames: ['system:node:worker-3'], dnsNames: ['worker-3'], ipAddresses: ['198.18.0.13'] }),
    context: servingContext,
    check: 'requester',
    reason: 'requested by system:node:worker-1, but the subject names another node',
    overridable: false,
  },
  'CN not of the form system:node:<name>': {
    csr: clientCsr({}, { commonNames: ['kube-admin'] }),
    check: 'subject-common-name',
    reason: 'CN "kube-admin" is not of the form system:node:<name>',
    overridable: false,
  },
  'two CN attributes': {
    csr: clientCsr({}, { commonNames: ['system:node:worker-1', 'system:node:master-0'] }),
    check: 'subject-common-name',
    reason: 'the subject has 2 CN attributes; exactly one (system:node:<name>) is required',
    overridable: false,
  },
  'a node name that is not a host name': {
    csr: clientCsr({}, { commonNames: ['system:node:Worker_1;reboot'] }),
    check: 'subject-common-name',
    reason: 'is not a valid RFC 1123 label',
    overridable: false,
  },
  'O other than system:nodes': {
    csr: clientCsr({}, { organizations: ['system:masters'] }),
    check: 'subject-organization',
    reason: 'O is [system:masters]; exactly [system:nodes] is required',
    overridable: false,
  },
  'an extra O (system:masters besides system:nodes)': {
    csr: clientCsr({}, { organizations: ['system:nodes', 'system:masters'] }),
    check: 'subject-organization',
    reason: 'O is [system:nodes, system:masters]; exactly [system:nodes] is required',
    overridable: false,
  },
  'a shared bootstrap identity for a node installed without an identity of its own': {
    csr: clientCsr(SHARED_OPENSHIFT_BOOTSTRAPPER, { commonNames: ['system:node:worker-6'] }),
    check: 'requester',
    reason: `requested by the shared bootstrap identity ${OPENSHIFT_NODE_BOOTSTRAPPER}; only the identity of the node's own install run is trusted, and the install run of worker-6 has no bootstrap identity of its own`,
    overridable: true,
  },
  'a requester that is neither an identity nor the node, for a node without one': {
    csr: clientCsr({ username: 'alice', uid: null, groups: ['system:authenticated'] }, { commonNames: ['system:node:worker-6'] }),
    check: 'requester',
    reason: 'requested by alice, which is neither the identity of the node\'s install run nor the node itself (the install run of worker-6 has no bootstrap identity of its own)',
    overridable: true,
  },
  'a kubeadm bootstrap token requester in an OPENSHIFT cluster': {
    csr: clientCsr(SHARED_BOOTSTRAP_TOKEN, { commonNames: ['system:node:worker-6'] }),
    check: 'requester',
    reason: 'requested by system:bootstrap:abcdef, a KUBEADM bootstrap identity; this OPENSHIFT cluster\'s bootstrap identity is system:serviceaccount:openshift-machine-config-operator:node-bootstrapper',
    overridable: true,
  },
  'the OpenShift node-bootstrapper in a KUBEADM cluster': {
    csr: clientCsr(SHARED_OPENSHIFT_BOOTSTRAPPER, { commonNames: ['system:node:worker-6'] }),
    context: context({ settings: { bootstrapStyle: 'KUBEADM' } }),
    check: 'requester',
    reason: 'a OPENSHIFT bootstrap identity; this KUBEADM cluster\'s bootstrap identity is system:bootstrap:<token-id> in group system:bootstrappers',
    overridable: true,
  },
  'a client CSR for worker-6 requested by node worker-2': {
    csr: clientCsr(asNode('worker-2'), { commonNames: ['system:node:worker-6'] }),
    check: 'requester',
    reason: 'requested by system:node:worker-2, which is not the node the certificate is for',
    overridable: true,
  },
  'a SAN IP not in the inventory': {
    csr: servingCsr({}, { ipAddresses: ['198.18.0.11', '10.96.0.1'] }),
    context: servingContext,
    check: 'san-ip',
    reason: 'IP address 10.96.0.1 is not an address of worker-1 in the inventory ([198.18.0.11, 2001:db8::11])',
    overridable: true,
  },
  'the node\'s IPv4 address as an IPv4-mapped IPv6 SAN': {
    csr: servingCsr({}, { ipAddresses: ['::ffff:198.18.0.11'] }),
    context: servingContext,
    check: 'san-ip',
    reason: 'IP address ::ffff:198.18.0.11 is not an address of worker-1',
    overridable: true,
  },
  'a SAN DNS name not the node\'s own': {
    csr: servingCsr({}, { dnsNames: ['worker-1', 'kubernetes.default.svc'] }),
    context: servingContext,
    check: 'san-dns',
    reason: 'DNS name kubernetes.default.svc is not the name of worker-1, the node the subject names',
    overridable: false,
  },
  'a wildcard SAN DNS name': {
    csr: servingCsr({}, { dnsNames: ['*.apps.prod.example.com'] }),
    context: servingContext,
    check: 'san-form',
    reason: 'DNS name *.apps.prod.example.com is not a host name (wildcards and other forms are never signed for a kubelet)',
    overridable: false,
  },
  'an email SAN': {
    csr: servingCsr({}, { emailAddresses: ['admin@example.com'] }),
    context: servingContext,
    check: 'san-other',
    reason: 'a serving certificate may name only DNS names and IPs; found email admin@example.com',
    overridable: false,
  },
  'a URI SAN': {
    csr: servingCsr({}, { uris: ['spiffe://cluster.local/ns/kube-system/sa/admin'] }),
    context: servingContext,
    check: 'san-other',
    reason: 'found URI spiffe://cluster.local/ns/kube-system/sa/admin',
    overridable: false,
  },
  'a directory-name SAN': {
    csr: servingCsr({}, { otherNames: ['dn:CN=admin'] }),
    context: servingContext,
    check: 'san-other',
    reason: 'found name dn:CN=admin',
    overridable: false,
  },
  'a client CSR with a registered-ID SAN': {
    csr: clientCsr({}, { otherNames: ['id:1.2.3.4'] }),
    check: 'no-sans',
    reason: 'found name id:1.2.3.4',
    overridable: false,
  },
  'a serving CSR without any SAN': {
    csr: servingCsr({}, { dnsNames: [], ipAddresses: [] }),
    context: servingContext,
    check: 'san-form',
    reason: 'a serving certificate needs at least one DNS name or IP address',
    overridable: false,
  },
  'a node that is not being installed (installed yesterday)': {
    csr: clientCsr(requestedBy(identityOf('worker-2')), { commonNames: ['system:node:worker-2'] }),
    context: context({ clusterNodes: [] }),
    check: 'install-run',
    reason: 'worker-2 is not being installed (its last install run is succeeded); only nodes in an active install run are auto-approved',
    overridable: true,
  },
  'a node that was never installed': {
    csr: clientCsr(asNode('worker-3'), { commonNames: ['system:node:worker-3'] }),
    check: 'install-run',
    reason: 'worker-3 is not being installed (it has never been installed)',
    overridable: true,
  },
  'a node whose kubelet has not been started yet': {
    csr: clientCsr(requestedBy(identityOf('worker-5')), { commonNames: ['system:node:worker-5'] }),
    check: 'approval-window',
    reason: 'the kubelet of worker-5 has not been started by an install run (no START_KUBELET step yet)',
    overridable: true,
  },
  'outside the approval window (kubelet started two hours ago)': {
    csr: clientCsr(requestedBy(identityOf('worker-4')), { commonNames: ['system:node:worker-4'] }),
    check: 'approval-window',
    reason: 'the approval window of worker-4 closed at 2025-06-01T11:00:00.000Z (60 min after its kubelet started)',
    overridable: true,
  },
  'created before the kubelet was started': {
    csr: clientCsr({ createdAt: minutesAgo(30) }),
    check: 'approval-window',
    reason: 'created at 2025-06-01T11:30:00.000Z, before the kubelet of worker-1 was started (2025-06-01T11:55:00.000Z)',
    overridable: true,
  },
  'an older pending CSR while a newer, forged one for the same node is pending': {
    csr: clientCsr({ name: 'csr-old', createdAt: minutesAgo(2) }),
    context: context({}, [clientCsr({ name: 'csr-new', usages: ['digital signature', 'client auth', 'server auth'] })]),
    check: 'single-pending',
    reason: 'another pending CSR for worker-1 with this signer exists (csr-new, newer, not approvable: usages',
    overridable: true,
  },
  'a second client certificate in the same install': {
    csr: clientCsr(),
    context: context({}, [APPROVED_CLIENT]),
    check: 'first-of-install',
    reason: 'a client certificate for worker-1 was already approved during this install (csr-client-approved); another one needs an operator',
    overridable: true,
  },
  'a node already Ready with a valid client certificate': {
    csr: clientCsr(),
    context: context({ clusterNodes: [{ name: 'worker-1', ready: true, validClientCertificate: true }] }),
    check: 'not-joined',
    reason: 'worker-1 is already a Ready node with a valid client certificate',
    overridable: true,
  },
  'an unparsable request': {
    csr: clientCsr({ request: null, parseError: 'Cannot parse PEM: no CERTIFICATE REQUEST block' }),
    check: 'request',
    reason: 'the request is not a parsable PKCS#10 certificate request (Cannot parse PEM: no CERTIFICATE REQUEST block)',
    overridable: false,
  },
  'a bad signature': {
    csr: clientCsr({}, { signatureValid: false }),
    check: 'signature',
    reason: 'the request signature does not verify with its public key',
    overridable: false,
  },
  'an RSA-1024 key': {
    csr: clientCsr({ usages: ['digital signature', 'key encipherment', 'client auth'] }, { key: { algorithm: 'RSA', bits: 1024, curve: null } }),
    check: 'key',
    reason: 'RSA key of 1024 bits is too weak; at least 2048 bits are required',
    overridable: false,
  },
  'an ECDSA P-521 key': {
    csr: clientCsr({}, { key: { algorithm: 'EC', bits: 521, curve: 'P-521' } }),
    check: 'key',
    reason: 'ECDSA curve P-521 is not accepted; only P-256 and P-384 are',
    overridable: false,
  },
  'an Ed25519 key': {
    csr: clientCsr({}, { key: { algorithm: 'Ed25519', bits: null, curve: null } }),
    check: 'key',
    reason: 'Ed25519 keys are not accepted',
    overridable: false,
  },
  'a serving CSR requested by the run\'s bootstrap identity': {
    csr: servingCsr(requestedBy(identityOf('worker-1'))),
    context: servingContext,
    check: 'requester',
    reason: `requested by ${identityOf('worker-1').username}; a serving certificate must be requested by the node itself`,
    overridable: false,
  },
  'a serving CSR from a node identity without the system:nodes group': {
    csr: servingCsr({ groups: ['system:authenticated'] }),
    context: servingContext,
    check: 'requester',
    reason: 'requested by system:node:worker-1 without the group system:nodes',
    overridable: false,
  },
  'a client CSR with SANs': {
    csr: clientCsr({}, { dnsNames: ['worker-1'], ipAddresses: ['198.18.0.11'] }),
    check: 'no-sans',
    reason: 'a client certificate must not carry subject alternative names; found DNS worker-1, IP 198.18.0.11',
    overridable: false,
  },
  // worker-6 is installed without a run identity of its own (bound by name only): force may go past these.
  'a serving CSR for a node whose client CSR was never approved': {
    csr: servingCsr(asNode('worker-6'), { commonNames: ['system:node:worker-6'], dnsNames: ['worker-6'], ipAddresses: ['198.18.0.16'] }),
    check: 'client-bootstrapped',
    reason: 'no client CSR of worker-6 was approved during this install; its client certificate did not come from this install',
    overridable: true,
  },
  'a serving CSR whose client CSR was approved before this install': {
    csr: servingCsr(asNode('worker-6'), { commonNames: ['system:node:worker-6'], dnsNames: ['worker-6'], ipAddresses: ['198.18.0.16'] }),
    context: context({}, [clientCsr({ ...asNode('worker-6'), name: 'csr-last-year', state: 'APPROVED', createdAt: minutesAgo(60 * 24 * 365) }, { commonNames: ['system:node:worker-6'] })]),
    check: 'client-bootstrapped',
    reason: 'no client CSR of worker-6 was approved during this install',
    overridable: true,
  },
  'a client CSR for worker-1 filed with a node credential of that name (an earlier machine\'s)': {
    csr: clientCsr(asNode('worker-1')),
    check: 'requester',
    reason: 'requested by system:node:worker-1, a node credential of that name; worker-1 is installed with its run\'s own identity',
    overridable: false,
  },
  'a serving CSR filed with a client certificate not issued to worker-1\'s install run': {
    csr: servingCsr({ credentialId: `X509SHA256=${'ab'.repeat(32)}` }),
    context: servingContext,
    check: 'run-credential',
    reason: `filed with a client certificate (X509SHA256=${'ab'.repeat(6)}…) that was not issued to the install run of worker-1`,
    overridable: false,
  },
  'a serving CSR filed with worker-1\'s client certificate of a year ago (a removed machine\'s)': {
    csr: servingCsr({ credentialId: `X509SHA256=${'cd'.repeat(32)}` }),
    context: context({}, [
      APPROVED_CLIENT,
      clientCsr({
        name: 'csr-last-year',
        state: 'APPROVED',
        createdAt: minutesAgo(60 * 24 * 365),
        certificate: { credentialId: `X509SHA256=${'cd'.repeat(32)}`, dnsNames: [], ipAddresses: [], notBefore: minutesAgo(60 * 24 * 365), notAfter: minutesAgo(-60) },
      }),
    ]),
    check: 'run-credential',
    reason: `filed with a client certificate (X509SHA256=${'cd'.repeat(6)}…) issued for worker-1 before its current install run`,
    overridable: false,
  },
  'a serving CSR whose filing certificate the API server does not name': {
    csr: servingCsr({ credentialId: null }),
    context: servingContext,
    check: 'run-credential',
    reason: 'the API server did not name the certificate that filed this CSR',
    overridable: false,
  },
  'a client CSR created before the install run started (within the kubelet start\'s clock skew)': {
    csr: clientCsr({ createdAt: minutesAgo(6) }),
    context: context({ inventory: INVENTORY.map((node) => (node.hostname === 'worker-1' && node.installRun ? { ...node, installRun: { ...node.installRun, startedAt: minutesAgo(5.5) } } : node)) }),
    check: 'approval-window',
    reason: 'before the install run of worker-1 started',
    overridable: true,
  },
  'a serving CSR with client auth': {
    csr: servingCsr({ usages: ['digital signature', 'server auth', 'client auth'] }),
    context: servingContext,
    check: 'usages',
    reason: 'not allowed: client auth; a kubelet asks for exactly digital signature, server auth',
    overridable: false,
  },
  'a CSR that is already denied': {
    csr: clientCsr({ state: 'DENIED' }),
    check: 'pending',
    reason: 'the CSR is already denied; nothing to decide',
    overridable: false,
  },
};

/**
 * Client CSRs for a node this service installs with an identity of its own, filed by anyone
 * else: denied as impostors, naming who filed them; force can never approve them.
 */
const IMPOSTORS: Record<string, { readonly csr: CsrFacts; readonly reason: string }> = {
  'the shared OpenShift node-bootstrapper (its token is in the worker Ignition)': {
    csr: clientCsr(SHARED_OPENSHIFT_BOOTSTRAPPER),
    reason: `impostor: a client CSR for worker-1 requested by ${OPENSHIFT_NODE_BOOTSTRAPPER}, not by the bootstrap identity of the install run of worker-1 (${identityOf('worker-1').username}) nor by the node itself`,
  },
  'the shared kubeadm bootstrap token': {
    csr: clientCsr(SHARED_BOOTSTRAP_TOKEN),
    reason: 'impostor: a client CSR for worker-1 requested by system:bootstrap:abcdef, not by the bootstrap identity of the install run of worker-1',
  },
  'the identity of another node\'s install run': {
    csr: clientCsr(requestedBy(identityOf('worker-4'))),
    reason: `requested by ${identityOf('worker-4').username}, not by the bootstrap identity of the install run of worker-1`,
  },
  'another account of the bootstrap namespace': {
    csr: clientCsr({ username: `system:serviceaccount:${BOOTSTRAP_NAMESPACE}:default`, uid: 'uid-default' }),
    reason: `requested by system:serviceaccount:${BOOTSTRAP_NAMESPACE}:default, not by the bootstrap identity`,
  },
  'an account re-created under the run identity\'s name': {
    csr: clientCsr({ uid: 'uid-someone-else' }),
    reason: `requested by ${identityOf('worker-1').username}, with UID uid-someone-else, not the UID uid-run-worker-1 of the identity this service minted (the account was re-created)`,
  },
  'another node': {
    csr: clientCsr(asNode('worker-2')),
    reason: 'impostor: a client CSR for worker-1 requested by system:node:worker-2',
  },
  'the shared identity asking for system:masters as well': {
    csr: clientCsr(SHARED_OPENSHIFT_BOOTSTRAPPER, { organizations: ['system:nodes', 'system:masters'] }),
    reason: `impostor: a client CSR for worker-1 requested by ${OPENSHIFT_NODE_BOOTSTRAPPER}`,
  },
};

describe('CSR policy: hostile or wrong CSRs stay pending', () => {
  it('has at least 20 of them', () => {
    expect(Object.keys(HOSTILE).length).toBeGreaterThanOrEqual(20);
  });

  it.each(Object.entries(HOSTILE))('%s', (_title, { csr, context: given, check, reason, overridable }) => {
    const verdict = evaluateCsr(csr, given ?? context());
    expect(verdict.decision).toBe('LEAVE_PENDING');
    expect(verdict.reason).toContain(reason);
    const failed = verdict.checks.find((entry) => entry.name === check);
    expect(failed, `check ${check} is listed`).toBeDefined();
    expect(failed?.passed).toBe(false);
    expect(failed?.detail).toContain(reason);
    expect(failed?.overridable, 'whether force may go past it').toBe(overridable);
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
  it('approves worker-1\'s client CSR filed by its install run\'s own identity, listing every check as passed', () => {
    const verdict = evaluateCsr(clientCsr(), context());
    expect(verdict).toMatchObject({ decision: 'APPROVE', node: 'worker-1', kind: 'CLIENT', reason: `all ${CLIENT_CSR_CHECKS.length} checks passed` });
    expect(verdict.checks.map((check) => check.name)).toEqual(CLIENT_CSR_CHECKS);
    expect(verdict.checks.every((check) => check.passed)).toBe(true);
    expect(verdict.checks.find((check) => check.name === 'requester')?.detail).toBe(`requested by ${identityOf('worker-1').username}, the bootstrap identity of the install run of worker-1`);
  });

  it.each(['OPENSHIFT', 'KUBEADM'] as const)('approves the run identity the same way in a %s cluster', (bootstrapStyle) => {
    expect(evaluateCsr(clientCsr(), context({ settings: { bootstrapStyle } })).decision).toBe('APPROVE');
  });

  it.each([
    ['the OpenShift node-bootstrapper', SHARED_OPENSHIFT_BOOTSTRAPPER, 'OPENSHIFT'],
    ['a kubeadm bootstrap token', SHARED_BOOTSTRAP_TOKEN, 'KUBEADM'],
  ] as const)('never auto-approves %s, the shared credential, even where it is the cluster\'s own style', (_what, requester, bootstrapStyle) => {
    const verdict = evaluateCsr(clientCsr(requester, { commonNames: ['system:node:worker-6'] }), context({ settings: { bootstrapStyle } }));
    expect(verdict.decision).toBe('LEAVE_PENDING');
    expect(verdict.checks.filter((check) => !check.passed).map((check) => check.name)).toEqual(['requester']);
    expect(forceBlockers(verdict)).toEqual([]);
  });

  it('approves a node credential\'s client CSR only for a host installed without a run identity of its own', () => {
    const legacy = clientCsr({ ...asNode('worker-6') }, { commonNames: ['system:node:worker-6'] });
    const verdict = evaluateCsr(legacy, context());
    expect(verdict.decision).toBe('APPROVE');
    expect(verdict.checks.find((check) => check.name === 'requester')?.detail).toBe('requested by the node itself (system:node:worker-6): a renewal');
  });

  it('leaves a node credential\'s client CSR for a host being installed here pending, not approved and not denied as an impostor', () => {
    const verdict = evaluateCsr(clientCsr(asNode('worker-1')), context());
    expect(verdict.decision).toBe('LEAVE_PENDING');
    expect(forceBlockers(verdict).map((check) => check.name)).toEqual(['requester']);
  });

  it('is not stalled by a client certificate force-approved for the name to another requester during the window', () => {
    const forced = clientCsr({ ...SHARED_OPENSHIFT_BOOTSTRAPPER, name: 'csr-forced', state: 'APPROVED', createdAt: minutesAgo(4) });
    const verdict = evaluateCsr(clientCsr(), context({}, [forced]));
    expect(verdict.decision).toBe('APPROVE');
    // Nor does its certificate count for the serving CSR: only the run's own client certificate does.
    const serving = evaluateCsr(servingCsr(), context({}, [forced]));
    expect(serving.checks.filter((check) => !check.passed).map((check) => check.name)).toEqual(['client-bootstrapped', 'run-credential']);
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
    const inventory = INVENTORY.map((node) => (node.hostname === 'worker-1' ? { ...node, installRun: { status: 'SUCCEEDED' as const, kubeletStartedAt: minutesAgo(5), bootstrapIdentity: identityOf('worker-1') } } : node));
    const verdict = evaluateCsr(servingCsr(), context({ inventory, clusterNodes: [{ name: 'worker-1', ready: true, validClientCertificate: true }] }, [APPROVED_CLIENT]));
    expect(verdict.decision).toBe('APPROVE');
  });

  it('approves a client CSR filed in the same second the install run started: Kubernetes keeps whole seconds, the run keeps milliseconds', () => {
    const runStart = new Date(minutesAgo(5).getTime() + 186);
    const inventory = INVENTORY.map((node) => (node.hostname === 'worker-1' && node.installRun ? { ...node, installRun: { ...node.installRun, startedAt: runStart } } : node));
    expect(evaluateCsr(clientCsr({ createdAt: minutesAgo(5) }), context({ inventory })).decision).toBe('APPROVE');
    expect(evaluateCsr(clientCsr({ createdAt: minutesAgo(5 + 1 / 60) }), context({ inventory })).reason).toContain('before the install run of worker-1 started');
  });

  it('honours a configured approval window and clock skew', () => {
    const late = clientCsr(requestedBy(identityOf('worker-4')), { commonNames: ['system:node:worker-4'] });
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

describe('CSR policy: impostors', () => {
  it.each(Object.entries(IMPOSTORS))('denies a client CSR for worker-1 from %s, naming who filed it; force cannot approve it', (_title, { csr, reason }) => {
    const verdict = evaluateCsr(csr, context());
    expect(verdict.decision).toBe('DENY_IMPOSTOR');
    expect(verdict.reason).toContain(reason);
    const requester = verdict.checks.find((check) => check.name === 'requester');
    expect(requester).toMatchObject({ passed: false, overridable: false });
    expect(forceBlockers(verdict).map((check) => check.name)).toContain('requester');
    expect(isImpostor(verdict)).toBe(true);
    // Still an impostor's once decided.
    expect(isImpostor(evaluateCsr({ ...csr, state: 'DENIED' }, context()))).toBe(true);
  });

  it('lets neither a newer nor an older impostor touch the real kubelet\'s CSR', () => {
    const real = clientCsr({ name: 'csr-real', createdAt: minutesAgo(2) });
    const before = clientCsr({ ...SHARED_BOOTSTRAP_TOKEN, name: 'csr-impostor-before', createdAt: minutesAgo(3) });
    const after = clientCsr({ ...SHARED_BOOTSTRAP_TOKEN, name: 'csr-impostor-after', createdAt: minutesAgo(1) });
    const ctx = context({}, [before, real, after]);
    expect(evaluateCsr(real, ctx)).toMatchObject({ decision: 'APPROVE' });
    expect(evaluateCsr(real, ctx).checks.find((check) => check.name === 'single-pending')?.detail).toBe('the only pending CSR for worker-1 with this signer');
    expect(evaluateCsr(before, ctx).decision).toBe('DENY_IMPOSTOR');
    expect(evaluateCsr(after, ctx).decision).toBe('DENY_IMPOSTOR');
  });

  it('still lets the run\'s own newer duplicate supersede the older one (kubelet re-files after ~15 min)', () => {
    const first = clientCsr({ name: 'csr-first', createdAt: minutesAgo(3) });
    const again = clientCsr({ name: 'csr-again', createdAt: minutesAgo(1) });
    const impostor = clientCsr({ ...SHARED_OPENSHIFT_BOOTSTRAPPER, name: 'csr-impostor', createdAt: minutesAgo(0) });
    const ctx = context({}, [first, again, impostor]);
    expect([evaluateCsr(first, ctx).decision, evaluateCsr(again, ctx).decision, evaluateCsr(impostor, ctx).decision]).toEqual(['DENY_SUPERSEDED', 'APPROVE', 'DENY_IMPOSTOR']);
  });

  it('treats a CSR for a node installed without an identity of its own as an operator\'s matter, not an impostor', () => {
    const verdict = evaluateCsr(clientCsr(SHARED_OPENSHIFT_BOOTSTRAPPER, { commonNames: ['system:node:worker-6'] }), context());
    expect(verdict.decision).toBe('LEAVE_PENDING');
    expect(isImpostor(verdict)).toBe(false);
    expect(isImpostor(evaluateCsr(clientCsr(), context()))).toBe(false);
  });
});

describe('CSR policy: what force may go past', () => {
  it('declares every check once', () => {
    expect(Object.keys(CSR_CHECK_OVERRIDES).sort()).toEqual([...new Set([...CLIENT_CSR_CHECKS, ...SERVING_CSR_CHECKS, ...SERVING_RENEWAL_CSR_CHECKS])].sort());
  });

  it.each(Object.entries(HOSTILE))('%s', (_title, { csr, context: given, overridable }) => {
    const blockers = forceBlockers(evaluateCsr(csr, given ?? context()));
    expect(blockers.length === 0).toBe(overridable);
  });

  it('never goes past the certificate\'s own form: signer, usages, subject, key, signature, SAN form, the cluster\'s own addresses, names not the node\'s', () => {
    const never = Object.entries(CSR_CHECK_OVERRIDES).filter(([, rule]) => rule === 'NEVER').map(([name]) => name).sort();
    expect(never).toEqual(['key', 'no-cluster-address', 'no-sans', 'pending', 'request', 'san-dns', 'san-form', 'san-other', 'signature', 'signer', 'subject-common-name', 'subject-organization', 'usages']);
  });

  it.each([
    ['a reason', 'the host was reinstalled by hand; ticket OPS-1234', null],
    ['no reason', undefined, 'is required with force: say why the CSR is approved against the policy'],
    ['only spaces', '   ', 'is required with force: say why the CSR is approved against the policy'],
    ['a reason too long', 'x'.repeat(FORCE_REASON_MAX_LENGTH + 1), `is ${FORCE_REASON_MAX_LENGTH + 1} characters long; at most ${FORCE_REASON_MAX_LENGTH} are allowed`],
    ['a NUL byte', 'ok\u0000', 'must not contain control characters'],
    ['several lines', 'line one\nline two', null],
  ])('checks the written reason: %s', (_what, reason, problem) => {
    expect(checkForceReason(reason)?.message ?? null).toBe(problem);
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
