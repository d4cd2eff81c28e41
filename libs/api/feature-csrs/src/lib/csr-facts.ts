import type { CsrSummary, NodeSummary, ParsedCertificateRequest } from '@ccos/api/data-access-kube';
import type { ClusterNodeFacts, CsrFacts, CsrRequestFacts, CsrState } from '@ccos/shared/domain';

/** The policy's four states from the API's five (an issued CSR is an approved one). */
export function policyState(csr: CsrSummary): CsrState {
  switch (csr.state) {
    case 'Pending':
      return 'PENDING';
    case 'Approved':
    case 'Issued':
      return 'APPROVED';
    case 'Denied':
      return 'DENIED';
    case 'Failed':
      return 'FAILED';
  }
}

/** A CSR as the policy sees it. */
export function csrFacts(csr: CsrSummary): CsrFacts {
  const createdAt = csr.createdAt ? new Date(csr.createdAt) : new Date(0);
  return {
    name: csr.name,
    signerName: csr.signerName,
    username: csr.username ?? '',
    uid: csr.requesterUid,
    credentialId: csr.credentialId,
    groups: csr.groups,
    usages: csr.usages,
    createdAt,
    state: policyState(csr),
    request: csr.request.ok ? requestFacts(csr.request.request) : null,
    parseError: csr.request.ok ? null : csr.request.error,
    certificate: csr.certificate
      ? { credentialId: csr.certificate.credentialId, dnsNames: csr.certificate.dnsNames, ipAddresses: csr.certificate.ipAddresses, notBefore: new Date(csr.certificate.notBefore), notAfter: new Date(csr.certificate.notAfter) }
      : null,
  };
}

export function requestFacts(request: ParsedCertificateRequest): CsrRequestFacts {
  return {
    commonNames: commonNamesOf(request),
    organizations: request.organizations,
    dnsNames: request.dnsNames,
    ipAddresses: request.ipAddresses,
    emailAddresses: request.emailAddresses,
    uris: request.uris,
    otherNames: request.otherNames,
    key: { algorithm: request.publicKey.algorithm, bits: request.publicKey.bits, curve: request.publicKey.curve },
    signatureValid: request.signatureValid,
  };
}

/**
 * Every CN of the subject. The parsed request names only the first one, so a subject with
 * two (a forged `CN=system:node:a, CN=system:node:b`) is recognised from its text form,
 * where values have their commas escaped.
 */
export function commonNamesOf(request: Pick<ParsedCertificateRequest, 'subject' | 'commonName'>): string[] {
  const fromText = request.subject
    .split(/(?<!\\)[,+]\s*/)
    .filter((part) => /^CN=/i.test(part))
    .map((part) => part.slice(3).replace(/\\(.)/g, '$1'));
  if (fromText.length > 1) {
    return fromText;
  }
  return request.commonName === null ? [] : [request.commonName];
}

/**
 * A Node of the cluster for the policy. A Ready condition stays True only while the kubelet
 * posts status, which it can only do with a valid client certificate; so Ready stands for
 * "holds a valid client certificate" (the node lifecycle controller turns a silent node
 * Unknown within its grace period).
 */
export function clusterNodeFacts(node: NodeSummary): ClusterNodeFacts {
  return { name: node.name, ready: node.ready, validClientCertificate: node.ready, addresses: node.addresses.map((entry) => entry.address) };
}
