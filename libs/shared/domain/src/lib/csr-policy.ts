import { bare, type CodedText, type MessageCode, type MessageParams, message } from '@ccos/shared/messages';
/**
 * The CSR auto-approve policy: which kubelet certificate requests the service may sign
 * on its own. Approve only when every check holds; otherwise leave the request for an
 * operator and say why. Every check is always listed with its result, so the console
 * can show the whole verdict, not just the first failure.
 *
 * Pure: the caller parses the PKCS#10 request and gathers the cluster's state; this
 * module only decides.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#kubernetes-signers
 */
import { checkHostname, checkIp } from './validation';

export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

/** Who asks for the first client certificate in an OpenShift-style cluster. */
export const OPENSHIFT_NODE_BOOTSTRAPPER = 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
/** The group every bootstrap-token user is in (kubeadm-style clusters). */
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';

/** How long after its kubelet started a node's CSRs may be approved automatically, unless configured. */
export const DEFAULT_CSR_APPROVAL_WINDOW_MS = 60 * 60 * 1000;
/** Tolerated difference between the clock that stamped the kubelet start and the API server's. */
export const DEFAULT_CSR_CLOCK_SKEW_MS = 2 * 60 * 1000;

export const CSR_STATES = ['PENDING', 'APPROVED', 'DENIED', 'FAILED'] as const;
export type CsrState = (typeof CSR_STATES)[number];

/**
 * LEAVE_TO_CLUSTER: a node renewing its own client certificate, which the cluster approves itself
 * (kube-controller-manager's csrapproving controller, through the `selfnodeclient` permission).
 */
export const CSR_POLICY_DECISIONS = ['APPROVE', 'LEAVE_PENDING', 'DENY_SUPERSEDED', 'DENY_IMPOSTOR', 'LEAVE_TO_CLUSTER'] as const;
export type CsrPolicyDecision = (typeof CSR_POLICY_DECISIONS)[number];

/**
 * Which of the policy's paths judged a CSR: JOIN (a node being installed: its first client and
 * serving certificates) or RENEWAL (a serving certificate for a node already joined here).
 */
export const CSR_POLICY_PATHS = ['JOIN', 'RENEWAL'] as const;
export type CsrPolicyPath = (typeof CSR_POLICY_PATHS)[number];

/** The two certificate kinds a kubelet asks for. */
export type KubeletCsrKind = 'CLIENT' | 'SERVING';

/** How a cluster's kubelets authenticate their first client CSR. */
export type CsrBootstrapStyle = 'OPENSHIFT' | 'KUBEADM';

/** The public key of a request, as parsed from its SubjectPublicKeyInfo. */
export interface CsrKeyFacts {
  /** `RSA`, `EC`, `Ed25519`, ... */
  readonly algorithm: string;
  /** Modulus length for RSA; curve size for EC. */
  readonly bits: number | null;
  /** `P-256`, `P-384`, ... for EC keys. */
  readonly curve: string | null;
}

/** What the PKCS#10 request itself says. */
export interface CsrRequestFacts {
  /** Every CN attribute of the subject (a kubelet sends exactly one). */
  readonly commonNames: readonly string[];
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly emailAddresses: readonly string[];
  readonly uris: readonly string[];
  /** SAN entries of any other kind (directory names, registered IDs, other names). */
  readonly otherNames?: readonly string[];
  readonly key: CsrKeyFacts;
  /** Whether the request's self-signature verifies with its own key (proof of possession). */
  readonly signatureValid: boolean;
}

/** One CertificateSigningRequest as the policy sees it. */
export interface CsrFacts {
  readonly name: string;
  readonly signerName: string;
  /** `spec.username` / `spec.uid` / `spec.groups`: set by the API server from the authenticated caller. */
  readonly username: string;
  readonly uid?: string | null;
  /**
   * The credential the requester authenticated with, as the API server names it in `spec.extra`
   * (`X509SHA256=<fingerprint>` for a client certificate, Kubernetes 1.31+); null when it does not.
   */
  readonly credentialId?: string | null;
  readonly groups: readonly string[];
  readonly usages: readonly string[];
  readonly createdAt: Date;
  readonly state: CsrState;
  /** The parsed request, or null when it could not be parsed (see `parseError`). */
  readonly request: CsrRequestFacts | null;
  readonly parseError?: string | null;
  /** The certificate the signer issued (`status.certificate`), parsed; null or absent before it is issued. */
  readonly certificate?: IssuedCertificateFacts | null;
}

/** What an issued certificate says: its names and validity. */
export interface IssuedCertificateFacts {
  /** How the API server names this certificate when it authenticates a request (`X509SHA256=<fingerprint>`). */
  readonly credentialId?: string | null;
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** A node of this cluster as this service knows it. */
export interface InventoryNodeFacts {
  readonly hostname: string;
  /** The addresses entered for the node; the only IPs a serving certificate may name. */
  readonly ips: readonly string[];
  /** The node's latest install run, if any. */
  readonly installRun: {
    readonly status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
    /** When the run's START_KUBELET step first started, or null before it. */
    readonly kubeletStartedAt: Date | null;
    /** When the run started and ended (null while it runs): its approval window never reaches outside them. */
    readonly startedAt?: Date | null;
    readonly finishedAt?: Date | null;
    /**
     * The bootstrap identity this service minted for the run and handed only to the host (a
     * ServiceAccount token): the one requester whose client CSR for the node is auto-approved.
     * Null for a run that has none (started before identities were minted).
     */
    readonly bootstrapIdentity?: RunBootstrapIdentity | null;
  } | null;
  /** Whether the node is JOINED in the inventory (its install through this service made it a Ready node). */
  readonly joined?: boolean;
}

/** A run's own bootstrap identity, as the API server names it in `spec.username` / `spec.uid`. */
export interface RunBootstrapIdentity {
  readonly username: string;
  /** The ServiceAccount's UID; a re-created account of the same name is another identity. */
  readonly uid: string | null;
}

/** A Node object found in the cluster. */
export interface ClusterNodeFacts {
  readonly name: string;
  readonly ready: boolean;
  /** Whether the node's kubelet holds a client certificate that is still valid. */
  readonly validClientCertificate: boolean;
  /** `status.addresses` values (IPs and host names) the Node reports. */
  readonly addresses?: readonly string[];
}

export interface CsrPolicySettings {
  readonly bootstrapStyle: CsrBootstrapStyle;
  /** From the kubelet start until how long after it CSRs may be approved. */
  readonly approvalWindowMs?: number;
  readonly clockSkewMs?: number;
}

/** Everything besides the CSR itself that the decision depends on. */
export interface CsrPolicyContext {
  readonly settings: CsrPolicySettings;
  readonly inventory: readonly InventoryNodeFacts[];
  readonly clusterNodes: readonly ClusterNodeFacts[];
  /** The cluster's CSRs (this one may be among them; it is skipped). */
  readonly csrs: readonly CsrFacts[];
  readonly now: Date;
  /**
   * The cluster's own addresses and names: the VIP, the API URL's host, the `kubernetes` Service's
   * ClusterIPs (read from the cluster), and `api.<domain>` / `api-int.<domain>` when the base domain
   * is known. Never in a node's serving certificate, whatever the path and whoever approves.
   * The in-cluster names of the API (`kubernetes`, `kubernetes.default.svc.<domain>`, ...) are
   * refused without being listed here (see {@link isClusterServiceName}).
   */
  readonly clusterAddresses?: readonly string[];
  /**
   * True when the `kubernetes` Service's address could not be read from the cluster: then no
   * serving certificate naming an IP address passes, since the policy cannot tell it from the
   * Service's (fail closed; the next decision reads it again).
   */
  readonly serviceAddressUnknown?: boolean;
}

export interface CsrCheck {
  /** A stable identifier, e.g. `subject-organization`. */
  readonly name: string;
  readonly passed: boolean;
  /** What was found, in words an operator understands. */
  readonly detail: string;
  /** `detail` by its code in the message catalogue, and its parameters. */
  readonly detailCode: MessageCode;
  readonly detailParams: MessageParams;
  /** Whether an ADMIN's forced approval may go past this check when it fails (see {@link CSR_CHECK_OVERRIDES}). */
  readonly overridable: boolean;
}

export interface CsrVerdict {
  readonly decision: CsrPolicyDecision;
  /** The inventory node the request is for, or null when it names none. */
  readonly node: string | null;
  readonly kind: KubeletCsrKind | null;
  /** The path whose checks are listed (and whose auto-approve switch applies). */
  readonly path: CsrPolicyPath;
  /** One sentence: the first failed check, or why it is approved or superseded. */
  readonly reason: string;
  /** `reason` by its code in the message catalogue, and its parameters. */
  readonly reasonCode: MessageCode;
  readonly reasonParams: MessageParams;
  readonly checks: readonly CsrCheck[];
}

/** The checks of a client CSR, in the order a verdict lists them (the first five apply to any CSR). */
export const CLIENT_CSR_CHECKS = [
  'pending', 'request', 'signature', 'key', 'signer',
  'subject-common-name', 'subject-organization', 'usages', 'requester', 'no-sans',
  'inventory', 'install-run', 'approval-window', 'not-joined', 'first-of-install', 'single-pending',
] as const;

/** The checks of a serving CSR, in the order a verdict lists them. */
export const SERVING_CSR_CHECKS = [
  'pending', 'request', 'signature', 'key', 'signer',
  'subject-common-name', 'subject-organization', 'usages', 'requester', 'san-form', 'san-dns', 'san-ip', 'san-other', 'no-cluster-address',
  'inventory', 'install-run', 'approval-window', 'client-bootstrapped', 'run-credential', 'first-of-install', 'single-pending',
] as const;

/**
 * The checks of a serving-certificate renewal (a node joined here renewing its serving
 * certificate), in the order a verdict lists them: the certificate's own form as on the join
 * path, then what ties the renewal to the node this service joined.
 */
export const SERVING_RENEWAL_CSR_CHECKS = [
  'pending', 'request', 'signature', 'key', 'signer',
  'subject-common-name', 'subject-organization', 'usages', 'requester', 'san-form', 'san-dns', 'san-other',
  'joined-here', 'run-credential', 'renewal-sans', 'no-cluster-address', 'no-other-node-address', 'single-pending-renewal',
] as const;

export type CsrCheckName = (typeof CLIENT_CSR_CHECKS)[number] | (typeof SERVING_CSR_CHECKS)[number] | (typeof SERVING_RENEWAL_CSR_CHECKS)[number];

/**
 * What an ADMIN's forced approval may go past: `NEVER` for what makes the certificate itself
 * (signer, usages, subject form, key, proof of possession, the form of its SANs) — a forced
 * approval signs exactly what was asked, so these stay absolute — and for the identity rules of
 * every serving certificate ({@link SERVING_IDENTITY_CHECKS}); `FORCE` for what relates the
 * request to this service's inventory, install runs and time windows; `FORCE_UNLESS_INSTALLED_HERE`
 * for a client CSR's requester: overridable only for hosts this service did not install, because
 * a host it installs has an identity of its own and any other requester is an impostor.
 */
export type CsrCheckOverride = 'NEVER' | 'FORCE' | 'FORCE_UNLESS_INSTALLED_HERE';

export const CSR_CHECK_OVERRIDES: Readonly<Record<CsrCheckName, CsrCheckOverride>> = {
  pending: 'NEVER',
  request: 'NEVER',
  signature: 'NEVER',
  key: 'NEVER',
  signer: 'NEVER',
  'subject-common-name': 'NEVER',
  'subject-organization': 'NEVER',
  usages: 'NEVER',
  // A serving CSR's requester is never overridable (see checkServingRequester).
  requester: 'FORCE_UNLESS_INSTALLED_HERE',
  'no-sans': 'NEVER',
  'san-form': 'NEVER',
  'san-other': 'NEVER',
  // Any name but the node's own would let the node answer for that name.
  'san-dns': 'NEVER',
  'san-ip': 'FORCE',
  inventory: 'FORCE',
  'install-run': 'FORCE',
  'approval-window': 'FORCE',
  'not-joined': 'FORCE',
  'client-bootstrapped': 'FORCE',
  // A node installed here with its run's own identity: only the certificate issued to that identity files its serving CSRs.
  'run-credential': 'FORCE_UNLESS_INSTALLED_HERE',
  'first-of-install': 'FORCE',
  'single-pending': 'FORCE',
  'joined-here': 'FORCE',
  'renewal-sans': 'FORCE',
  // The cluster's own addresses in a kubelet's certificate would let that node answer as the API.
  'no-cluster-address': 'NEVER',
  'no-other-node-address': 'FORCE',
  'single-pending-renewal': 'FORCE',
};

/**
 * The rules every serving CSR is held to on every path (join, renewal; auto-approved, approved by
 * an operator, forced by an ADMIN): the requester is the node the subject names, no DNS name but
 * that node's, no address or name of the cluster itself. A certificate that broke one would let
 * its holder answer as the API server (every pod trusts the cluster CA for
 * `kubernetes.default.svc`) or as another node. None is overridable.
 */
export const SERVING_IDENTITY_CHECKS = ['requester', 'san-dns', 'no-cluster-address'] as const satisfies readonly CsrCheckName[];

/** The longest reason a forced approval may give. */
export const FORCE_REASON_MAX_LENGTH = 500;

/** Why a forced approval's written reason is not acceptable, or null when it is. */
export function checkForceReason(reason: string | null | undefined): CodedText | null {
  return checkWrittenReason(reason, message('csr.forceReason.required'));
}

/**
 * Why a reason an operator writes for the audit log (a forced approval, a restricted node role) is
 * not acceptable — `whenMissing` when there is none, too long, control characters — or null.
 */
export function checkWrittenReason(reason: string | null | undefined, whenMissing: CodedText): CodedText | null {
  const text = reason?.trim() ?? '';
  if (text.length === 0) {
    return whenMissing;
  }
  if (text.length > FORCE_REASON_MAX_LENGTH) {
    return message('validation.hostnameTooLong', { length: text.length, max: FORCE_REASON_MAX_LENGTH });
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) {
    return message('csr.forceReason.control');
  }
  return null;
}

/**
 * Whether a verdict is about an impostor: a client CSR for a node this service installs with an
 * identity of its own, filed by someone else. Holds once the CSR is decided too (the requester
 * check does not depend on the CSR being pending).
 */
export function isImpostor(verdict: Pick<CsrVerdict, 'kind' | 'checks'>): boolean {
  const requester = verdict.checks.find((check) => check.name === 'requester');
  return verdict.kind === 'CLIENT' && requester !== undefined && !requester.passed && !requester.overridable;
}

/** The failed checks that no forced approval may go past; empty when force may approve the CSR. */
export function forceBlockers(verdict: Pick<CsrVerdict, 'checks'>): CsrCheck[] {
  return verdict.checks.filter((check) => !check.passed && !check.overridable);
}

const NOT_PARSED = message('csr.notParsed');

/** Which of the two kubelet signers a CSR is for, or null for any other signer. */
export function kubeletCsrKind(signerName: string): KubeletCsrKind | null {
  return signerName === KUBELET_CLIENT_SIGNER ? 'CLIENT' : signerName === KUBELET_SERVING_SIGNER ? 'SERVING' : null;
}

/** The node name in `system:node:<name>`, or null when `value` is not of that form. */
export function nodeNameOf(value: string): string | null {
  return value.startsWith(NODE_USER_PREFIX) && value.length > NODE_USER_PREFIX.length ? value.slice(NODE_USER_PREFIX.length) : null;
}

/** The node a CSR claims to be for: from its subject CN. */
export function claimedNodeName(csr: CsrFacts): string | null {
  const names = csr.request?.commonNames ?? [];
  return names.length === 1 ? nodeNameOf(names[0]) : null;
}

/** The usages a kubelet asks for with a key of `algorithm` (key encipherment only with RSA). */
export function kubeletUsages(kind: KubeletCsrKind, algorithm: string): { readonly required: readonly string[]; readonly optional: readonly string[] } {
  const purpose = kind === 'CLIENT' ? 'client auth' : 'server auth';
  return { required: ['digital signature', purpose], optional: algorithm === 'RSA' ? ['key encipherment'] : [] };
}

/**
 * Decides what to do with one CSR. A client CSR for a node whose install run has its own
 * bootstrap identity, filed by anyone else, is DENY_IMPOSTOR; older pending duplicates of an
 * approvable request (same node, signer and a legitimate requester) are DENY_SUPERSEDED;
 * everything else that fails a check stays pending.
 */
export function evaluateCsr(csr: CsrFacts, context: CsrPolicyContext): CsrVerdict {
  const join = evaluateJoin(csr, context);
  if (join.decision === 'APPROVE' || csr.state !== 'PENDING') {
    return join;
  }
  const claimed = claimedNodeName(csr);
  const node = claimed === null ? undefined : context.inventory.find((entry) => sameHostname(entry.hostname, claimed));
  if (join.kind === 'SERVING' && claimed !== null && renewalApplies(csr, claimed, node, context)) {
    return evaluateRenewal(csr, claimed, node, context);
  }
  if (join.kind === 'CLIENT' && claimed !== null && join.decision === 'LEAVE_PENDING' && renewsOwnClientCertificate(csr, claimed, context)) {
    return {
      ...join,
      decision: 'LEAVE_TO_CLUSTER',
      ...reasonOf(message('csr.verdict.leftToCluster', { node: claimed })),
    };
  }
  return join;
}

/**
 * A serving CSR goes down the renewal path when the join path does not approve it and the node
 * is not in the middle of an install: the node is joined here, the node itself asks (a node this
 * service did not join, so its verdict can say why it is left for an operator), or a node joined
 * here asks in another node's name.
 */
function renewalApplies(csr: CsrFacts, claimed: string, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): boolean {
  if (node?.installRun?.status === 'RUNNING') {
    return false;
  }
  const requester = nodeNameOf(csr.username);
  if (node?.joined === true || (requester !== null && sameHostname(requester, claimed))) {
    return true;
  }
  return requester !== null && context.inventory.some((entry) => entry.joined === true && sameHostname(entry.hostname, requester));
}

/** A client CSR a Node of the cluster files for itself, with its current client certificate. */
function renewsOwnClientCertificate(csr: CsrFacts, claimed: string, context: CsrPolicyContext): boolean {
  const requester = nodeNameOf(csr.username);
  return (
    requester !== null &&
    sameHostname(requester, claimed) &&
    csr.groups.includes(NODES_GROUP) &&
    context.clusterNodes.some((entry) => sameHostname(entry.name, claimed))
  );
}

/** The join path: a node being installed, its first client and serving certificates. */
function evaluateJoin(csr: CsrFacts, context: CsrPolicyContext): CsrVerdict {
  const kind = kubeletCsrKind(csr.signerName);
  const request = csr.request;
  const claimed = claimedNodeName(csr);
  const node = claimed === null ? undefined : context.inventory.find((entry) => sameHostname(entry.hostname, claimed));
  const duplicates = claimed === null || kind === null ? null : duplicatesOf(csr, kind, claimed, node, context);
  const checks: CsrCheck[] = [
    checkState(csr),
    checkParsed(csr),
    checkSignature(request),
    checkKey(request),
    checkSigner(csr, kind),
  ];
  if (kind !== null) {
    checks.push(...kindChecks(csr, kind, claimed, node, duplicates, context));
  }
  const failed = checks.filter((check) => !check.passed);
  const nodeName = node?.hostname ?? null;
  if (failed.length === 0) {
    return { decision: 'APPROVE', node: nodeName, kind, path: 'JOIN', ...reasonOf(message('csr.verdict.allPassed', { count: checks.length })), checks };
  }
  const requester = checks.find((entry) => entry.name === 'requester');
  // A node credential of that name is no impostor of the bootstrap: it is left pending (or to the cluster, for a Node it has).
  if (csr.state === 'PENDING' && kind === 'CLIENT' && requester && !requester.passed && installedHere(node) && !filedByNodeItself(csr, claimed)) {
    return { decision: 'DENY_IMPOSTOR', node: nodeName, kind, path: 'JOIN', ...reasonOfCheck(requester), checks };
  }
  // An older duplicate of an approvable request goes, whatever else is wrong with it.
  if (csr.state === 'PENDING' && kind !== null && duplicates?.supersededBy) {
    const check = checks.find((entry) => entry.name === 'single-pending');
    return { decision: 'DENY_SUPERSEDED', node: nodeName, kind, path: 'JOIN', ...(check ? reasonOfCheck(check) : reasonOf(message('csr.verdict.superseded'))), checks };
  }
  return { decision: 'LEAVE_PENDING', node: nodeName, kind, path: 'JOIN', ...reasonOfCheck(failed[0]), checks };
}


/**
 * The renewal path: a serving certificate for a node this service joined, asked for by the node
 * itself, naming exactly what its current serving certificate names (or, without one, only its
 * inventory hostname and addresses); never the cluster's own addresses nor another node's; one
 * pending renewal per node at a time. Never denies: what fails waits for an operator.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/#certificate-rotation
 */
function evaluateRenewal(csr: CsrFacts, claimed: string, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): CsrVerdict {
  const request = csr.request;
  const checks: CsrCheck[] = [
    checkState(csr),
    checkParsed(csr),
    checkSignature(request),
    checkKey(request),
    checkSigner(csr, 'SERVING'),
    checkCommonName(request),
    checkOrganization(request),
    checkUsages(csr, 'SERVING'),
    checkServingRequester(csr, claimed),
    checkSanForm(request),
    checkSanDns(request, claimed),
    checkNoOtherSans(request),
    checkJoinedHere(claimed, node),
    checkRunCredential(csr, claimed, node, context, 'RENEWAL'),
    checkRenewalSans(request, claimed, node, context),
    checkNoClusterAddress(request, context),
    checkNoOtherNodeAddress(request, claimed, context),
    checkSinglePendingRenewal(csr, claimed, node, context),
  ];
  const failed = checks.filter((check) => !check.passed);
  const nodeName = node?.hostname ?? null;
  if (failed.length === 0) {
    return { decision: 'APPROVE', node: nodeName, kind: 'SERVING', path: 'RENEWAL', ...reasonOf(message('csr.verdict.renewalPassed', { count: checks.length })), checks };
  }
  return { decision: 'LEAVE_PENDING', node: nodeName, kind: 'SERVING', path: 'RENEWAL', ...reasonOfCheck(failed[0]), checks };
}

function checkJoinedHere(claimed: string, node: InventoryNodeFacts | undefined): CsrCheck {
  if (!node) {
    return fail('joined-here', message('csr.joined-here.fail1', { p0: claimed }));
  }
  if (node.joined !== true) {
    return fail('joined-here', message('csr.joined-here.fail2', { p0: node.hostname }));
  }
  if (node.installRun?.status !== 'SUCCEEDED') {
    return fail('joined-here', message('csr.joined-here.fail3', { p0: node.hostname, p1: node.installRun ? bare(message('csr.lastRun', { status: node.installRun.status })) : bare(message('csr.neverInstalledHere')) }));
  }
  return pass('joined-here', message('csr.joined-here.pass1', { p0: node.hostname }));
}

/** The newest still valid serving certificate issued for the node, from the cluster's CSRs. */
function currentServingCertificate(claimed: string, context: CsrPolicyContext): { csr: CsrFacts; certificate: IssuedCertificateFacts } | null {
  let best: { csr: CsrFacts; certificate: IssuedCertificateFacts } | null = null;
  for (const other of context.csrs) {
    const certificate = other.certificate;
    if (
      certificate &&
      other.signerName === KUBELET_SERVING_SIGNER &&
      other.state === 'APPROVED' &&
      claimedNodeName(other) !== null &&
      sameHostname(claimedNodeName(other) ?? '', claimed) &&
      certificate.notAfter.getTime() > context.now.getTime() &&
      (best === null || certificate.notBefore.getTime() > best.certificate.notBefore.getTime())
    ) {
      best = { csr: other, certificate };
    }
  }
  return best;
}

function checkRenewalSans(request: CsrRequestFacts | null, claimed: string, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): CsrCheck {
  if (!request) {
    return fail('renewal-sans', NOT_PARSED);
  }
  const asked = nameSet(request.dnsNames, request.ipAddresses);
  const current = currentServingCertificate(claimed, context);
  if (current) {
    const held = nameSet(current.certificate.dnsNames, current.certificate.ipAddresses);
    const added = [...asked].filter((name) => !held.has(name));
    const dropped = [...held].filter((name) => !asked.has(name));
    if (added.length > 0 || dropped.length > 0) {
      const problems = [
        added.length > 0 ? bare(message('csr.renewal-sans.adds', { names: added.join(', ') })) : null,
        dropped.length > 0 ? bare(message('csr.renewal-sans.drops', { names: dropped.join(', ') })) : null,
      ].filter((text) => text !== null);
      return fail('renewal-sans', message('csr.renewal-sans.fail1', { p0: problems, p1: claimed, p2: current.csr.name, p3: [...held].join(', ') }));
    }
    return pass('renewal-sans', message('csr.renewal-sans.pass1', { p0: claimed, p1: current.csr.name, p2: current.certificate.notAfter.toISOString() }));
  }
  if (!node) {
    return fail('renewal-sans', message('csr.renewal-sans.fail2', { p0: claimed }));
  }
  const known = nameSet([node.hostname], node.ips);
  const foreign = [...asked].filter((name) => !known.has(name));
  if (foreign.length > 0) {
    return fail('renewal-sans', message('csr.renewal-sans.fail3', { p0: foreign.join(', '), p1: foreign.length, p2: node.hostname, p3: [...known].join(', ') }));
  }
  return pass('renewal-sans', message('csr.renewal-sans.pass2', { p0: node.hostname }));
}

function checkNoClusterAddress(request: CsrRequestFacts | null, context: CsrPolicyContext): CsrCheck {
  if (!request) {
    return fail('no-cluster-address', NOT_PARSED);
  }
  const listed = context.clusterAddresses ?? [];
  const cluster = nameSet(
    listed.filter((address) => checkIp(address) !== null),
    listed.filter((address) => checkIp(address) === null),
  );
  const hits = [...nameSet(request.dnsNames, request.ipAddresses)].filter((name) => cluster.has(name) || isClusterServiceName(name));
  if (hits.length > 0) {
    return fail('no-cluster-address', message('csr.no-cluster-address.fail1', { p0: hits.join(', '), p1: hits.length }));
  }
  if (context.serviceAddressUnknown === true && request.ipAddresses.length > 0) {
    return fail('no-cluster-address', message('csr.no-cluster-address.serviceUnknown', { ips: request.ipAddresses.join(', ') }));
  }
  return pass('no-cluster-address', message('csr.no-cluster-address.pass1'));
}

/** The in-cluster names of the API server's Service (and OpenShift's alias of it), in any cluster domain. */
const CLUSTER_SERVICE_NAMES = /^(kubernetes|openshift)(\.default(\.svc(\..+)?)?)?\.?$/;

/**
 * Whether a DNS name is one the cluster's API answers to from inside: `kubernetes`,
 * `kubernetes.default`, `kubernetes.default.svc` and `kubernetes.default.svc.<cluster domain>`
 * (and the same under `openshift`). Every pod trusts the cluster CA for these.
 * @see https://kubernetes.io/docs/tasks/run-application/access-api-from-pod/#directly-accessing-the-rest-api
 */
export function isClusterServiceName(name: string): boolean {
  return CLUSTER_SERVICE_NAMES.test(name.toLowerCase());
}

/**
 * The names a cluster's API is published under in its base domain, derived from the API URL's
 * host when it is OpenShift's `api.<cluster>.<base domain>` or `api-int.…`: both of them, so a
 * certificate naming the internal one is refused too. Empty when the host says nothing of it.
 * @see https://docs.openshift.com/container-platform/latest/installing/installing_bare_metal/installing-bare-metal.html#installation-dns-user-infra_installing-bare-metal
 */
export function apiNamesOf(apiHost: string): string[] {
  const match = /^api(?:-int)?\.(.+)$/i.exec(apiHost.replace(/\.$/, ''));
  return match && checkIp(apiHost) !== null ? [`api.${match[1].toLowerCase()}`, `api-int.${match[1].toLowerCase()}`] : [];
}

function checkNoOtherNodeAddress(request: CsrRequestFacts | null, claimed: string, context: CsrPolicyContext): CsrCheck {
  if (!request) {
    return fail('no-other-node-address', NOT_PARSED);
  }
  const owners = new Map<string, string>();
  for (const other of context.inventory) {
    if (!sameHostname(other.hostname, claimed)) {
      for (const name of nameSet([other.hostname], other.ips)) {
        owners.set(name, other.hostname);
      }
    }
  }
  for (const other of context.clusterNodes) {
    if (!sameHostname(other.name, claimed)) {
      const addresses = other.addresses ?? [];
      for (const name of nameSet([other.name, ...addresses.filter((address) => checkIp(address) !== null)], addresses.filter((address) => checkIp(address) === null))) {
        owners.set(name, other.name);
      }
    }
  }
  const hits = [...nameSet(request.dnsNames, request.ipAddresses)].filter((name) => owners.has(name));
  return hits.length > 0
    ? fail('no-other-node-address', message('csr.no-other-node-address.fail1', { p0: hits.map((name) => `${name} (${owners.get(name)})`).join(', '), p1: hits.length, p2: claimed }))
    : pass('no-other-node-address', message('csr.no-other-node-address.pass1'));
}

function checkSinglePendingRenewal(csr: CsrFacts, claimed: string, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): CsrCheck {
  const rivals = context.csrs.filter(
    (other) =>
      other.name !== csr.name &&
      other.state === 'PENDING' &&
      other.signerName === KUBELET_SERVING_SIGNER &&
      claimedNodeName(other) !== null &&
      sameHostname(claimedNodeName(other) ?? '', claimed) &&
      checkServingRequester(other, claimed).passed &&
      checkRunCredential(other, claimed, node, context, 'RENEWAL').passed,
  );
  return rivals.length > 0
    ? fail('single-pending-renewal', message('csr.single-pending-renewal.fail1', { p0: claimed, p1: rivals.map((other) => other.name).join(', ') }))
    : pass('single-pending-renewal', message('csr.single-pending-renewal.pass1', { p0: claimed }));
}

/** DNS names (lower case) and IPs (one spelling each) as one set. */
function nameSet(dnsNames: readonly string[], ips: readonly string[]): Set<string> {
  return new Set([...dnsNames.map((name) => name.toLowerCase()), ...ips.map(canonicalIp)]);
}

/** Evaluates every pending CSR of a cluster (what a dry run or the auto-approver does). */
export function evaluatePendingCsrs(context: CsrPolicyContext): Map<string, CsrVerdict> {
  const verdicts = new Map<string, CsrVerdict>();
  for (const csr of context.csrs) {
    if (csr.state === 'PENDING') {
      verdicts.set(csr.name, evaluateCsr(csr, context));
    }
  }
  return verdicts;
}

function kindChecks(
  csr: CsrFacts,
  kind: KubeletCsrKind,
  claimed: string | null,
  node: InventoryNodeFacts | undefined,
  duplicates: Duplicates | null,
  context: CsrPolicyContext,
): CsrCheck[] {
  const request = csr.request;
  const common = [checkCommonName(request), checkOrganization(request), checkUsages(csr, kind)];
  if (kind === 'CLIENT') {
    return [
      ...common,
      checkClientRequester(csr, claimed, node, context.settings.bootstrapStyle),
      checkNoSans(request),
      checkInventory(claimed, node),
      checkInstallRun(kind, node),
      checkWindow(csr, node, context),
      checkNotJoined(claimed, context.clusterNodes),
      checkFirstOfInstall(csr, kind, claimed, node, context),
      checkSinglePending(claimed, duplicates),
    ];
  }
  return [
    ...common,
    checkServingRequester(csr, claimed),
    checkSanForm(request),
    checkSanDns(request, claimed),
    checkSanIps(request, node),
    checkNoOtherSans(request),
    checkNoClusterAddress(request, context),
    checkInventory(claimed, node),
    checkInstallRun(kind, node),
    checkWindow(csr, node, context),
    checkClientBootstrapped(claimed, node, context),
    checkRunCredential(csr, claimed, node, context, 'JOIN'),
    checkFirstOfInstall(csr, kind, claimed, node, context),
    checkSinglePending(claimed, duplicates),
  ];
}

function reasonOf(text: CodedText): Pick<CsrVerdict, 'reason' | 'reasonCode' | 'reasonParams'> {
  return { reason: text.message, reasonCode: text.code, reasonParams: text.params };
}

function reasonOfCheck(check: CsrCheck): Pick<CsrVerdict, 'reason' | 'reasonCode' | 'reasonParams'> {
  return { reason: check.detail, reasonCode: check.detailCode, reasonParams: check.detailParams };
}

function pass(name: CsrCheckName, detail: CodedText, overridable = CSR_CHECK_OVERRIDES[name] === 'FORCE'): CsrCheck {
  return { name, passed: true, detail: detail.message, detailCode: detail.code, detailParams: detail.params, overridable };
}

function fail(name: CsrCheckName, detail: CodedText, overridable = CSR_CHECK_OVERRIDES[name] === 'FORCE'): CsrCheck {
  return { name, passed: false, detail: detail.message, detailCode: detail.code, detailParams: detail.params, overridable };
}

/** Whether this service installs the node with an identity of its own (see {@link CSR_CHECK_OVERRIDES}). */
function installedHere(node: InventoryNodeFacts | undefined): node is InventoryNodeFacts & { installRun: { bootstrapIdentity: RunBootstrapIdentity } } {
  return (node?.installRun?.bootstrapIdentity ?? null) !== null;
}

/** Whether force may go past a failed requester check of a CSR for `node`. */
function requesterOverridable(node: InventoryNodeFacts | undefined): boolean {
  return !installedHere(node);
}

/** Whether the node the CSR claims filed it itself, with a node credential (`system:node:<claimed>` in system:nodes). */
function filedByNodeItself(csr: CsrFacts, claimed: string | null): boolean {
  const requester = nodeNameOf(csr.username);
  return requester !== null && claimed !== null && sameHostname(requester, claimed) && csr.groups.includes(NODES_GROUP);
}

/** Whether the CSR was filed by the run's own identity (the same account, not one re-created under its name). */
function byRunIdentity(csr: CsrFacts, identity: RunBootstrapIdentity): boolean {
  return csr.username === identity.username && (identity.uid === null || csr.uid === identity.uid);
}

function checkState(csr: CsrFacts): CsrCheck {
  return csr.state === 'PENDING' ? pass('pending', message('csr.pending.pass1')) : fail('pending', message('csr.pending.fail1', { p0: csr.state }));
}

function checkParsed(csr: CsrFacts): CsrCheck {
  return csr.request
    ? pass('request', message('csr.request.pass1'))
    : fail('request', message('csr.request.fail1', { p0: csr.parseError ? ` (${csr.parseError})` : '' }));
}

function checkSignature(request: CsrRequestFacts | null): CsrCheck {
  if (!request) {
    return fail('signature', NOT_PARSED);
  }
  return request.signatureValid
    ? pass('signature', message('csr.signature.pass1'))
    : fail('signature', message('csr.signature.fail1'));
}

function checkKey(request: CsrRequestFacts | null): CsrCheck {
  if (!request) {
    return fail('key', NOT_PARSED);
  }
  const { algorithm, bits, curve } = request.key;
  if (algorithm === 'RSA') {
    return bits !== null && bits >= 2048
      ? pass('key', message('csr.key.pass1', { p0: bits }))
      : fail('key', message('csr.key.fail1', { p0: bits ?? 'unknown' }));
  }
  if (algorithm === 'EC') {
    return curve === 'P-256' || curve === 'P-384'
      ? pass('key', message('csr.key.pass2', { p0: curve }))
      : fail('key', message('csr.key.fail2', { p0: curve ?? 'unknown' }));
  }
  return fail('key', message('csr.key.fail3', { p0: algorithm }));
}

function checkSigner(csr: CsrFacts, kind: KubeletCsrKind | null): CsrCheck {
  if (kind === 'CLIENT') {
    return pass('signer', message('csr.signer.pass1', { p0: csr.signerName }));
  }
  if (kind === 'SERVING') {
    return pass('signer', message('csr.signer.pass2', { p0: csr.signerName }));
  }
  return fail('signer', message('csr.signer.fail1', { p0: csr.signerName, p1: KUBELET_CLIENT_SIGNER, p2: KUBELET_SERVING_SIGNER }));
}

function checkCommonName(request: CsrRequestFacts | null): CsrCheck {
  if (!request) {
    return fail('subject-common-name', NOT_PARSED);
  }
  const names = request.commonNames;
  if (names.length !== 1) {
    return fail('subject-common-name', message('csr.subject-common-name.fail1', { p0: names.length }));
  }
  const name = nodeNameOf(names[0]);
  if (name === null) {
    return fail('subject-common-name', message('csr.subject-common-name.fail2', { p0: names[0] }));
  }
  const problem = checkHostname(name);
  return problem ? fail('subject-common-name', message('csr.subject-common-name.fail3', { p0: names[0], p1: bare(problem) })) : pass('subject-common-name', message('csr.subject-common-name.pass1', { p0: names[0] }));
}

function checkOrganization(request: CsrRequestFacts | null): CsrCheck {
  if (!request) {
    return fail('subject-organization', NOT_PARSED);
  }
  const orgs = request.organizations;
  return orgs.length === 1 && orgs[0] === NODES_GROUP
    ? pass('subject-organization', message('csr.subject-organization.pass1', { p0: NODES_GROUP }))
    : fail('subject-organization', message('csr.subject-organization.fail1', { p0: orgs.join(', '), p1: NODES_GROUP }));
}

function checkUsages(csr: CsrFacts, kind: KubeletCsrKind): CsrCheck {
  const algorithm = csr.request?.key.algorithm ?? 'unknown';
  const { required, optional } = kubeletUsages(kind, algorithm);
  const asked = csr.usages;
  const duplicates = asked.filter((usage, index) => asked.indexOf(usage) !== index);
  const missing = required.filter((usage) => !asked.includes(usage));
  const extra = asked.filter((usage) => !required.includes(usage) && !optional.includes(usage));
  if (duplicates.length > 0 || missing.length > 0 || extra.length > 0) {
    const problems = [
      missing.length > 0 ? bare(message('csr.usages.missing', { usages: missing.join(', ') })) : null,
      extra.length > 0
        ? bare(extra.includes('key encipherment') ? message('csr.usages.notAllowedRsa', { usages: extra.join(', '), algorithm }) : message('csr.usages.notAllowed', { usages: extra.join(', ') }))
        : null,
      duplicates.length > 0 ? bare(message('csr.usages.repeated', { usages: duplicates.join(', ') })) : null,
    ].filter((problem) => problem !== null);
    const expectedText = optional.length > 0 ? message('csr.usages.expectedOptional', { required: required.join(', '), optional: optional.join(', ') }) : message('removal.raw', { text: required.join(', ') });
    return fail('usages', message('csr.usages.fail1', { p0: asked.join(', '), p1: problems, p2: bare(expectedText) }));
  }
  return pass('usages', message('csr.usages.pass1', { p0: asked.join(', ') }));
}

function checkClientRequester(csr: CsrFacts, claimed: string | null, node: InventoryNodeFacts | undefined, style: CsrBootstrapStyle): CsrCheck {
  const requester = csr.username;
  const overridable = requesterOverridable(node);
  const renewing = nodeNameOf(requester);
  const byNodeItself = filedByNodeItself(csr, claimed);
  // For a host installed with its run's own identity, that identity is the only requester: a
  // node credential of the same name may be an earlier machine's, which removal cannot revoke.
  if (installedHere(node)) {
    const identity = node.installRun.bootstrapIdentity;
    if (byRunIdentity(csr, identity)) {
      return pass('requester', message('csr.requester.pass2', { p0: requester, p1: node.hostname }), overridable);
    }
    if (byNodeItself) {
      return fail('requester', message('csr.requester.nodeCredential', { requester, node: node.hostname, identity: identity.username }), overridable);
    }
    const why = bare(
      csr.username === identity.username
        ? message('csr.requester.recreated', { uid: csr.uid ?? 'none', minted: identity.uid ?? '' })
        : message('csr.requester.notRunIdentity', { node: node.hostname, identity: identity.username }),
    );
    return fail('requester', message('csr.requester.fail1', { p0: node.hostname, p1: requester, p2: why }), overridable);
  }
  if (byNodeItself) {
    return pass('requester', message('csr.requester.pass1', { p0: requester }), overridable);
  }
  if (renewing !== null) {
    return fail('requester', message('csr.requester.fail2', { p0: requester }), overridable);
  }
  const own = bare(
    node === undefined
      ? message('csr.requester.notInInventory')
      : node.installRun === null
        ? message('csr.requester.neverInstalled', { node: node.hostname })
        : message('csr.requester.noOwnIdentity', { node: node.hostname }),
  );
  if (isBootstrapIdentity(csr, style)) {
    return fail('requester', message('csr.requester.fail3', { p0: requester, p1: own }), overridable);
  }
  const otherStyle: CsrBootstrapStyle = style === 'OPENSHIFT' ? 'KUBEADM' : 'OPENSHIFT';
  if (isBootstrapIdentity(csr, otherStyle)) {
    return fail('requester', message('csr.requester.fail4', { p0: requester, p1: otherStyle, p2: style, p3: bootstrapIdentity(style) }), overridable);
  }
  return fail('requester', message('csr.requester.fail5', { p0: requester, p1: own }), overridable);
}

/** A serving CSR comes from the node it names, whatever the path: never overridable (see {@link SERVING_IDENTITY_CHECKS}). */
function checkServingRequester(csr: CsrFacts, claimed: string | null): CsrCheck {
  const requester = csr.username;
  const requesterNode = nodeNameOf(requester);
  const overridable = false;
  if (requesterNode === null) {
    return fail('requester', message('csr.requester.fail6', { p0: requester }), overridable);
  }
  if (!csr.groups.includes(NODES_GROUP)) {
    return fail('requester', message('csr.requester.fail7', { p0: requester, p1: NODES_GROUP }), overridable);
  }
  if (claimed === null || !sameHostname(requesterNode, claimed)) {
    return fail('requester', message('csr.requester.fail8', { p0: requester }), overridable);
  }
  return pass('requester', message('csr.requester.pass3', { p0: requester }), overridable);
}

function checkNoSans(request: CsrRequestFacts | null): CsrCheck {
  if (!request) {
    return fail('no-sans', NOT_PARSED);
  }
  const sans = allSans(request);
  return sans.length === 0 ? pass('no-sans', message('csr.no-sans.pass1')) : fail('no-sans', message('csr.no-sans.fail1', { p0: sans.join(', ') }));
}

/** The form of a serving certificate's names: host names (no wildcards) and addresses, at least one. */
function checkSanForm(request: CsrRequestFacts | null): CsrCheck {
  if (!request) {
    return fail('san-form', NOT_PARSED);
  }
  if (request.dnsNames.length === 0 && request.ipAddresses.length === 0) {
    return fail('san-form', message('csr.san-form.fail1'));
  }
  const badNames = request.dnsNames.filter((name) => checkHostname(name.toLowerCase()) !== null);
  if (badNames.length > 0) {
    return fail('san-form', message('csr.san-form.fail2', { p0: badNames.join(', ') }));
  }
  const badIps = request.ipAddresses.filter((ip) => checkIp(ip) !== null);
  if (badIps.length > 0) {
    return fail('san-form', message('csr.san-form.fail3', { p0: badIps.join(', ') }));
  }
  return pass('san-form', message('csr.san-form.pass1'));
}

/** No DNS name but the name of the node the subject claims (inventory or not: a name is the node's own or it is not). */
function checkSanDns(request: CsrRequestFacts | null, claimed: string | null): CsrCheck {
  if (!request) {
    return fail('san-dns', NOT_PARSED);
  }
  if (claimed === null) {
    return fail('san-dns', message('csr.san-dns.fail1'));
  }
  const foreign = request.dnsNames.filter((name) => !sameHostname(name, claimed));
  if (foreign.length > 0) {
    return fail('san-dns', message('csr.san-dns.fail2', { p0: foreign.join(', '), p1: claimed }));
  }
  return pass('san-dns', request.dnsNames.length > 0 ? message('csr.san-dns.pass1', { p0: request.dnsNames.join(', ') }) : message('csr.san-dns.pass2'));
}

function checkSanIps(request: CsrRequestFacts | null, node: InventoryNodeFacts | undefined): CsrCheck {
  if (!request) {
    return fail('san-ip', NOT_PARSED);
  }
  if (!node) {
    return fail('san-ip', message('csr.san-ip.fail1'));
  }
  const known = new Set(node.ips.map(canonicalIp));
  const foreign = request.ipAddresses.filter((ip) => !known.has(canonicalIp(ip)));
  if (foreign.length > 0) {
    return fail('san-ip', message('csr.san-ip.fail2', { p0: foreign.join(', '), p1: node.hostname, p2: node.ips.join(', ') }));
  }
  return pass('san-ip', request.ipAddresses.length > 0 ? message('csr.san-ip.pass1', { p0: request.ipAddresses.join(', ') }) : message('csr.san-ip.pass2'));
}

function checkNoOtherSans(request: CsrRequestFacts | null): CsrCheck {
  if (!request) {
    return fail('san-other', NOT_PARSED);
  }
  const other = [
    ...request.emailAddresses.map((email) => `email ${email}`),
    ...request.uris.map((uri) => `URI ${uri}`),
    ...(request.otherNames ?? []).map((name) => `name ${name}`),
  ];
  return other.length === 0
    ? pass('san-other', message('csr.san-other.pass1'))
    : fail('san-other', message('csr.san-other.fail1', { p0: other.join(', ') }));
}

function checkInventory(claimed: string | null, node: InventoryNodeFacts | undefined): CsrCheck {
  if (claimed === null) {
    return fail('inventory', message('csr.inventory.fail1'));
  }
  return node ? pass('inventory', message('csr.inventory.pass1', { p0: node.hostname })) : fail('inventory', message('csr.inventory.fail2', { p0: claimed }));
}

function checkInstallRun(kind: KubeletCsrKind, node: InventoryNodeFacts | undefined): CsrCheck {
  if (!node) {
    return fail('install-run', message('csr.install-run.fail1'));
  }
  const run = node.installRun;
  if (run?.status === 'RUNNING') {
    return pass('install-run', message('csr.install-run.pass1', { p0: node.hostname }));
  }
  // A kubelet asks for its serving certificate right after registering, so the run may
  // already have succeeded (the Node turned Ready) when the serving CSR arrives.
  if (kind === 'SERVING' && run?.status === 'SUCCEEDED') {
    return pass('install-run', message('csr.install-run.pass2', { p0: node.hostname }));
  }
  return fail('install-run', message('csr.install-run.fail2', { p0: node.hostname, p1: run ? bare(message('csr.lastRun', { status: run.status })) : bare(message('csr.neverInstalled')) }));
}

function checkWindow(csr: CsrFacts, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): CsrCheck {
  const started = node?.installRun?.kubeletStartedAt ?? null;
  if (!node || !started) {
    return fail('approval-window', node ? message('csr.approval-window.fail3', { p0: node.hostname }) : message('csr.approval-window.fail4'));
  }
  const { from, until, boundByRun } = runWindowOf(node, started, context.settings);
  if (csr.createdAt.getTime() < from.getTime()) {
    return boundByRun.from
      ? fail('approval-window', message('csr.approval-window.beforeRun', { created: csr.createdAt.toISOString(), node: node.hostname, started: from.toISOString() }))
      : fail('approval-window', message('csr.approval-window.fail1', { p0: csr.createdAt.toISOString(), p1: node.hostname, p2: started.toISOString() }));
  }
  if (boundByRun.until && csr.createdAt.getTime() > until.getTime()) {
    return fail('approval-window', message('csr.approval-window.afterRun', { created: csr.createdAt.toISOString(), node: node.hostname, ended: until.toISOString() }));
  }
  if (context.now.getTime() > until.getTime() || csr.createdAt.getTime() > until.getTime()) {
    return fail('approval-window', message('csr.approval-window.fail2', { p0: node.hostname, p1: until.toISOString(), p2: minutes(context.settings.approvalWindowMs ?? DEFAULT_CSR_APPROVAL_WINDOW_MS) }));
  }
  return pass('approval-window', message('csr.approval-window.pass1', { p0: node.hostname, p1: started.toISOString(), p2: until.toISOString() }));
}

function checkNotJoined(claimed: string | null, clusterNodes: readonly ClusterNodeFacts[]): CsrCheck {
  if (claimed === null) {
    return fail('not-joined', message('csr.not-joined.fail1'));
  }
  const existing = clusterNodes.find((entry) => sameHostname(entry.name, claimed));
  if (existing?.ready && existing.validClientCertificate) {
    return fail('not-joined', message('csr.not-joined.fail2', { p0: claimed }));
  }
  return pass('not-joined', existing ? message('csr.not-joined.pass1', { p0: claimed }) : message('csr.not-joined.pass2', { p0: claimed }));
}

function checkClientBootstrapped(claimed: string | null, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): CsrCheck {
  const started = node?.installRun?.kubeletStartedAt ?? null;
  if (claimed === null || !node || !started) {
    return fail('client-bootstrapped', message('csr.client-bootstrapped.fail1'));
  }
  const { from } = runWindowOf(node, started, context.settings);
  const client = context.csrs.find(
    (other) =>
      other.signerName === KUBELET_CLIENT_SIGNER &&
      other.state === 'APPROVED' &&
      claimedNodeName(other) === claimed &&
      other.createdAt.getTime() >= from.getTime() &&
      (!installedHere(node) || byRunIdentity(other, node.installRun.bootstrapIdentity)),
  );
  return client
    ? pass('client-bootstrapped', message('csr.client-bootstrapped.pass1', { p0: client.name }))
    : fail('client-bootstrapped', message('csr.client-bootstrapped.fail2', { p0: claimed }));
}

function checkFirstOfInstall(csr: CsrFacts, kind: KubeletCsrKind, claimed: string | null, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): CsrCheck {
  const started = node?.installRun?.kubeletStartedAt ?? null;
  if (claimed === null || !node || !started) {
    return fail('first-of-install', message('csr.first-of-install.fail1'));
  }
  const { from } = runWindowOf(node, started, context.settings);
  // Only an approval this install's own requester got counts: a certificate force-approved for the
  // name to someone else (before the install, or by another machine) does not stand in its way.
  const credentials = kind === 'SERVING' ? runCredentials(claimed, node, context) : null;
  const ours = (other: CsrFacts): boolean =>
    !installedHere(node)
      ? true
      : kind === 'CLIENT'
        ? byRunIdentity(other, node.installRun.bootstrapIdentity)
        : other.credentialId != null && credentials !== null && credentials.current.has(other.credentialId);
  const earlier = context.csrs.find(
    (other) =>
      other.name !== csr.name &&
      other.signerName === csr.signerName &&
      other.state === 'APPROVED' &&
      claimedNodeName(other) === claimed &&
      other.createdAt.getTime() >= from.getTime() &&
      ours(other),
  );
  const what = kind;
  return earlier
    ? fail('first-of-install', message('csr.first-of-install.fail2', { p0: what, p1: claimed, p2: earlier.name }))
    : pass('first-of-install', message('csr.first-of-install.pass1', { p0: what, p1: claimed }));
}

/** A node's client certificates by credential id: those of its current install run, and older ones. */
interface RunCredentials {
  /** Issued to the run's own identity during the run, or renewed by the node with one of these: credential id → CSR name. */
  readonly current: ReadonlyMap<string, string>;
  /** Issued for the node's name before the run started, or renewed with one of those: an earlier machine's. */
  readonly stale: ReadonlySet<string>;
}

/**
 * The client certificates issued for a node installed here with its run's own identity, as far as
 * the cluster's CSRs still show them (approved CSRs are garbage-collected after an hour); null
 * for a node installed otherwise.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#request-signing-process
 */
function runCredentials(claimed: string, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): RunCredentials | null {
  if (!installedHere(node)) {
    return null;
  }
  const identity = node.installRun.bootstrapIdentity;
  const started = runWindowStart(node, context.settings);
  const current = new Map<string, string>();
  const stale = new Set<string>();
  const clients = context.csrs
    .filter((other) => other.signerName === KUBELET_CLIENT_SIGNER && other.state === 'APPROVED' && other.certificate?.credentialId && sameHostname(claimedNodeName(other) ?? '', claimed))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  for (const other of clients) {
    const issued = other.certificate?.credentialId ?? '';
    const renewedWith = other.credentialId ?? null;
    if ((started !== null && other.createdAt.getTime() < started.getTime()) || (renewedWith !== null && stale.has(renewedWith))) {
      stale.add(issued);
    } else if (byRunIdentity(other, identity) || (renewedWith !== null && current.has(renewedWith) && filedByNodeItself(other, claimed))) {
      current.set(issued, other.name);
    }
  }
  return { current, stale };
}

/**
 * A serving CSR of a node installed here with its run's own identity must be filed with a client
 * certificate issued to that identity during the run (matched by the certificate's fingerprint, which
 * the API server names as the requester's credential), not merely by a node of that name: removing a
 * node cannot revoke the certificates its earlier machine holds. On the renewal path, the run's
 * client CSRs may be gone (garbage-collected after an hour): then only a credential known to be
 * older than the run is refused.
 */
function checkRunCredential(csr: CsrFacts, claimed: string | null, node: InventoryNodeFacts | undefined, context: CsrPolicyContext, path: CsrPolicyPath): CsrCheck {
  const credentials = claimed === null ? null : runCredentials(claimed, node, context);
  if (credentials === null || !installedHere(node)) {
    return pass('run-credential', message('csr.run-credential.notBound'), true);
  }
  const credential = csr.credentialId ?? null;
  const short = (id: string): string => id.replace(/^(X509SHA256=[0-9a-f]{12})[0-9a-f]+$/, '$1…');
  if (credential === null) {
    return path === 'JOIN'
      ? fail('run-credential', message('csr.run-credential.unnamed', { node: node.hostname }), false)
      : pass('run-credential', message('csr.run-credential.unnamedRenewal'), false);
  }
  const from = credentials.current.get(credential);
  if (from !== undefined) {
    return pass('run-credential', message('csr.run-credential.pass', { csr: from, node: node.hostname }), false);
  }
  if (credentials.stale.has(credential)) {
    return fail('run-credential', message('csr.run-credential.stale', { credential: short(credential), node: node.hostname }), false);
  }
  if (path === 'RENEWAL' && credentials.current.size === 0) {
    return pass('run-credential', message('csr.run-credential.goneRenewal', { node: node.hostname }), false);
  }
  return fail('run-credential', message('csr.run-credential.foreign', { credential: short(credential), node: node.hostname }), false);
}

function checkSinglePending(claimed: string | null, duplicates: Duplicates | null): CsrCheck {
  if (claimed === null || duplicates === null) {
    return fail('single-pending', message('csr.single-pending.fail1'));
  }
  const { rivals, newest, newestVerdict, supersededBy } = duplicates;
  if (rivals.length === 0) {
    return pass('single-pending', message('csr.single-pending.pass1', { p0: claimed }));
  }
  if (newest === null) {
    return pass('single-pending', message('csr.single-pending.pass2', { p0: rivals.length + 1, p1: claimed, p2: rivals.map((other) => other.name).join(', ') }));
  }
  if (supersededBy) {
    return fail('single-pending', message('csr.single-pending.fail2', { p0: newest.name, p1: newest.createdAt.toISOString(), p2: claimed }));
  }
  return fail(
    'single-pending',
    message('csr.single-pending.fail3', { p0: claimed, p1: newest.name, p2: newestVerdict ? { code: newestVerdict.reasonCode, params: newestVerdict.reasonParams } : 'unknown' }),
  );
}

/** Other pending CSRs for the same node and signer, and whether a newer approvable one supersedes this one. */
interface Duplicates {
  readonly rivals: readonly CsrFacts[];
  /** The newest of them when it is newer than this CSR; null when this CSR is the newest. */
  readonly newest: CsrFacts | null;
  readonly newestVerdict: CsrVerdict | null;
  readonly supersededBy: CsrFacts | null;
}

/**
 * Rivals are requests a legitimate requester filed (the run's identity, or the node itself):
 * an impostor's request is no duplicate of the kubelet's, so it can neither supersede the
 * real one nor stand in its way.
 */
function duplicatesOf(csr: CsrFacts, kind: KubeletCsrKind, claimed: string, node: InventoryNodeFacts | undefined, context: CsrPolicyContext): Duplicates {
  // A serving CSR filed with a certificate this install did not issue is no rival either: an old
  // machine's credential must not stand in the way of the real kubelet's request.
  const legitimate = (other: CsrFacts): boolean =>
    kind === 'CLIENT'
      ? checkClientRequester(other, claimed, node, context.settings.bootstrapStyle).passed
      : checkServingRequester(other, claimed).passed && checkRunCredential(other, claimed, node, context, 'JOIN').passed;
  const rivals = context.csrs.filter(
    (other) => other.name !== csr.name && other.state === 'PENDING' && other.signerName === csr.signerName && claimedNodeName(other) === claimed && legitimate(other),
  );
  const newest = rivals.reduce((best, other) => (isNewer(other, best) ? other : best), csr);
  if (newest === csr) {
    return { rivals, newest: null, newestVerdict: null, supersededBy: null };
  }
  // The newest CSR is evaluated as the newest, so this recursion ends after one step.
  const newestVerdict = evaluateCsr(newest, context);
  return { rivals, newest, newestVerdict, supersededBy: newestVerdict.decision === 'APPROVE' ? newest : null };
}

/** Newer by creation time; the name breaks ties so every replica picks the same one. */
function isNewer(a: CsrFacts, b: CsrFacts): boolean {
  const delta = a.createdAt.getTime() - b.createdAt.getTime();
  return delta > 0 || (delta === 0 && a.name > b.name);
}

function isBootstrapIdentity(csr: CsrFacts, style: CsrBootstrapStyle): boolean {
  if (style === 'OPENSHIFT') {
    return csr.username === OPENSHIFT_NODE_BOOTSTRAPPER;
  }
  return /^system:bootstrap:[a-z0-9]{6}$/.test(csr.username) && csr.groups.includes(BOOTSTRAPPERS_GROUP);
}

/** The bootstrap identity of a cluster style, as shown to operators. */
export function bootstrapIdentity(style: CsrBootstrapStyle): string {
  return style === 'OPENSHIFT' ? OPENSHIFT_NODE_BOOTSTRAPPER : `system:bootstrap:<token-id> in group ${BOOTSTRAPPERS_GROUP}`;
}

/** When the run's approval window opens (its kubelet start, less the tolerated skew), or null before the kubelet started. */
function runWindowStart(node: InventoryNodeFacts, settings: CsrPolicySettings): Date | null {
  const started = node.installRun?.kubeletStartedAt ?? null;
  return started === null ? null : runWindowOf(node, started, settings).from;
}

/**
 * A run's approval window: from its kubelet's start (less the tolerated skew) for the configured
 * length, but never before the run itself started nor after it ended (plus the skew, for a serving
 * CSR filed as the node turned Ready): a window belongs to one run, so another run's CSRs of the
 * same name (a re-install minutes later, a certificate approved just before) are never inside it.
 */
function runWindowOf(node: InventoryNodeFacts, started: Date, settings: CsrPolicySettings): { from: Date; until: Date; boundByRun: { from: boolean; until: boolean } } {
  const { from, until } = windowOf(started, settings);
  const runStart = node.installRun?.startedAt ?? null;
  const runEnd = node.installRun?.finishedAt ?? null;
  const endBound = runEnd === null ? null : new Date(runEnd.getTime() + (settings.clockSkewMs ?? DEFAULT_CSR_CLOCK_SKEW_MS));
  // A CSR's creationTimestamp has whole seconds: one filed in the second the run started reads as before it.
  const runStartSecond = runStart === null ? null : new Date(Math.floor(runStart.getTime() / 1000) * 1000);
  const fromByRun = runStartSecond !== null && runStartSecond.getTime() > from.getTime();
  const untilByRun = endBound !== null && endBound.getTime() < until.getTime();
  return { from: fromByRun && runStartSecond ? runStartSecond : from, until: untilByRun ? endBound : until, boundByRun: { from: fromByRun, until: untilByRun } };
}

function windowOf(started: Date, settings: CsrPolicySettings): { from: Date; until: Date } {
  const skew = settings.clockSkewMs ?? DEFAULT_CSR_CLOCK_SKEW_MS;
  const length = settings.approvalWindowMs ?? DEFAULT_CSR_APPROVAL_WINDOW_MS;
  return { from: new Date(started.getTime() - skew), until: new Date(started.getTime() + length) };
}

function allSans(request: CsrRequestFacts): string[] {
  return [
    ...request.dnsNames.map((name) => `DNS ${name}`),
    ...request.ipAddresses.map((ip) => `IP ${ip}`),
    ...request.emailAddresses.map((email) => `email ${email}`),
    ...request.uris.map((uri) => `URI ${uri}`),
    ...(request.otherNames ?? []).map((name) => `name ${name}`),
  ];
}

function sameHostname(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function minutes(ms: number): string {
  return `${Math.round(ms / 60_000)} min`;
}

/**
 * One spelling per address, so `2001:DB8::1` and `2001:db8:0:0:0:0:0:1` compare equal.
 * IPv4-mapped IPv6 addresses stay distinct from IPv4: a certificate encodes them differently.
 */
export function canonicalIp(value: string): string {
  const text = value.trim().toLowerCase();
  if (!text.includes(':')) {
    return text;
  }
  let tail: number[] = [];
  let body = text;
  const lastColon = text.lastIndexOf(':');
  const lastPart = text.slice(lastColon + 1);
  if (lastPart.includes('.')) {
    const quad = lastPart.split('.').map(Number);
    tail = [(quad[0] << 8) | quad[1], (quad[2] << 8) | quad[3]];
    body = text.slice(0, lastColon + 1);
    body = body.endsWith('::') ? body : body.slice(0, -1);
  }
  const halves = body.split('::');
  const toGroups = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const head = toGroups(halves[0]);
  const rest = halves.length > 1 ? toGroups(halves[1]) : [];
  const missing = 8 - head.length - rest.length - tail.length;
  const groups = [...head, ...(halves.length > 1 ? new Array<number>(Math.max(0, missing)).fill(0) : []), ...rest, ...tail];
  return groups.map((group) => group.toString(16)).join(':');
}
