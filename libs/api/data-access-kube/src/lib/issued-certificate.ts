// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { SubjectAlternativeNameExtension, X509Certificate } from '@peculiar/x509';

/** What an issued certificate (a CSR's `status.certificate`) says, as far as expiry and renewal care. */
export interface IssuedCertificate {
  readonly subject: string;
  readonly serialNumber: string;
  /**
   * `X509SHA256=<hex SHA-256 of the DER>`: what kube-apiserver names this certificate as a
   * credential (CSR `spec.extra["authentication.kubernetes.io/credential-id"]`).
   */
  readonly credentialId: string;
  readonly dnsNames: string[];
  readonly ipAddresses: string[];
  /** ISO 8601. */
  readonly notBefore: string;
  /** ISO 8601. */
  readonly notAfter: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/;
const EXTENSION_SAN = '2.5.29.17';

/**
 * Parses the first certificate of a CSR's `status.certificate` (PEM, or base64 of PEM as the JSON
 * carries it). Null when there is none or it cannot be read: an unreadable certificate says
 * nothing about expiry, and nothing here throws.
 * @see https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/certificate-signing-request-v1/#CertificateSigningRequestStatus
 */
export function parseIssuedCertificate(input: string | null | undefined): IssuedCertificate | null {
  if (!input) {
    return null;
  }
  const text = input.includes('-----BEGIN') ? input : Buffer.from(input, 'base64').toString('latin1');
  const block = PEM_CERTIFICATE.exec(text);
  if (!block) {
    return null;
  }
  try {
    const certificate = new X509Certificate(block[0]);
    const names = certificate.extensions
      .filter((extension) => extension.type === EXTENSION_SAN)
      .flatMap((extension) => new SubjectAlternativeNameExtension(extension.rawData).names.items);
    return {
      subject: certificate.subject,
      serialNumber: certificate.serialNumber,
      credentialId: `X509SHA256=${createHash('sha256').update(Buffer.from(certificate.rawData)).digest('hex')}`,
      dnsNames: names.filter((name) => name.type === 'dns').map((name) => name.value),
      ipAddresses: names.filter((name) => name.type === 'ip').map((name) => name.value),
      notBefore: certificate.notBefore.toISOString(),
      notAfter: certificate.notAfter.toISOString(),
    };
  } catch {
    return null;
  }
}
