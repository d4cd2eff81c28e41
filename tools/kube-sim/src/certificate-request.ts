import { webcrypto } from 'node:crypto';
import { privateKeyPem } from './certificate-authority';
import { x509 } from './x509';

/** What a kubelet-style CSR asks for. */
export interface CertificateRequestOptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
}

/**
 * Generates an ECDSA P-256 key and a PKCS#10 request for it (PEM both), as a kubelet does for its
 * client (`CN=system:node:<name>, O=system:nodes`) and serving (plus DNS/IP SANs) certificates.
 * Put `Buffer.from(csrPem).toString('base64')` into `spec.request`.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/
 */
export async function generateCertificateRequest(options: CertificateRequestOptions): Promise<{ csrPem: string; keyPem: string }> {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const sans: x509.JsonGeneralNames = [
    ...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: new x509.Name([...(options.organizations ?? []).map((o) => ({ O: [o] })), { CN: [options.commonName] }]),
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
  });
  return { csrPem: csr.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}
