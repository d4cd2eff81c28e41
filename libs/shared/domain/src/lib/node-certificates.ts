/**
 * Which certificates a node's kubelet holds now, and when they expire: the newest certificate
 * issued for each node and kind by the cluster's kubelet signers (from the CSRs, whose issued
 * certificates the signer wrote). Pure: the caller reads the CSRs.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/#certificate-rotation
 */
import { type CsrFacts, type CsrVerdict, type KubeletCsrKind, claimedNodeName, kubeletCsrKind } from './csr-policy';

/** Under this many days left, a certificate is shown with a warning. */
export const CERTIFICATE_WARNING_DAYS = 30;
/** Under this many days left, the expiry alert fires. */
export const CERTIFICATE_ALERT_DAYS = 7;

/** One certificate a node holds. */
export interface NodeCertificateFacts {
  /** The node name (from `CN=system:node:<name>`). */
  readonly node: string;
  readonly kind: KubeletCsrKind;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** Where the validity was read: the issued certificate of this CSR. */
  readonly csrName: string;
}

/** The newest issued certificate per node and kind (by notBefore; the name breaks ties), expired ones included. */
export function currentNodeCertificates(csrs: readonly CsrFacts[]): NodeCertificateFacts[] {
  const newest = new Map<string, NodeCertificateFacts>();
  for (const csr of csrs) {
    const kind = kubeletCsrKind(csr.signerName);
    const node = claimedNodeName(csr);
    const certificate = csr.certificate;
    if (kind === null || node === null || !certificate || csr.state !== 'APPROVED') {
      continue;
    }
    const key = `${node.toLowerCase()}/${kind}`;
    const known = newest.get(key);
    const delta = known ? certificate.notBefore.getTime() - known.notBefore.getTime() : 1;
    if (delta > 0 || (delta === 0 && known !== undefined && csr.name > known.csrName)) {
      newest.set(key, { node: node.toLowerCase(), kind, notBefore: certificate.notBefore, notAfter: certificate.notAfter, csrName: csr.name });
    }
  }
  return [...newest.values()].sort((a, b) => a.node.localeCompare(b.node) || a.kind.localeCompare(b.kind));
}

/** A renewal waiting for a decision: the oldest pending CSR on the renewal path, per node. */
export interface PendingRenewalFacts {
  readonly node: string;
  readonly csrName: string;
  readonly createdAt: Date;
}

/** The oldest pending renewal of each node, from the verdicts of the pending CSRs. */
export function oldestPendingRenewals(csrs: readonly CsrFacts[], verdictOf: (csr: CsrFacts) => CsrVerdict): PendingRenewalFacts[] {
  const oldest = new Map<string, PendingRenewalFacts>();
  for (const csr of csrs) {
    if (csr.state !== 'PENDING' || kubeletCsrKind(csr.signerName) !== 'SERVING') {
      continue;
    }
    const node = claimedNodeName(csr);
    if (node === null || verdictOf(csr).path !== 'RENEWAL') {
      continue;
    }
    const key = node.toLowerCase();
    const known = oldest.get(key);
    const delta = known ? csr.createdAt.getTime() - known.createdAt.getTime() : -1;
    if (delta < 0 || (delta === 0 && known !== undefined && csr.name < known.csrName)) {
      oldest.set(key, { node: key, csrName: csr.name, createdAt: csr.createdAt });
    }
  }
  return [...oldest.values()].sort((a, b) => a.node.localeCompare(b.node));
}

/** Whether a certificate has fewer than `days` days left at `now` (expired ones too). */
export function expiresWithin(notAfter: Date, now: Date, days: number): boolean {
  return notAfter.getTime() - now.getTime() < days * 24 * 3600 * 1000;
}
