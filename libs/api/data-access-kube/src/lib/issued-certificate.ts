import { X509Certificate, createHash } from 'node:crypto';

/** What an issued certificate (a CSR's `status.certificate`) says, as far as expiry and renewal care. */
export interface IssuedCertificate {
  readonly subject: string;
  /** Lower-case hex, as the certificate has it. */
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

/**
 * Parses the first certificate of a CSR's `status.certificate` (PEM, or base64 of PEM as the JSON
 * carries it) with Node's own X.509 parser (OpenSSL): every issued certificate of a cluster is read
 * as its watch reports it, a join storm's hundreds at once. Null when there is none or it cannot be
 * read: an unreadable certificate says nothing about expiry, and nothing here throws.
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
    const names = subjectAltNames(certificate.subjectAltName ?? '');
    return {
      subject: certificate.subject.split('\n').join(', '),
      serialNumber: certificate.serialNumber.toLowerCase(),
      credentialId: `X509SHA256=${createHash('sha256').update(certificate.raw).digest('hex')}`,
      dnsNames: names.filter((name) => name.type === 'DNS').map((name) => name.value),
      ipAddresses: names.filter((name) => name.type === 'IP Address').map((name) => canonicalIp(name.value)),
      notBefore: new Date(certificate.validFrom).toISOString(),
      notAfter: new Date(certificate.validTo).toISOString(),
    };
  } catch {
    return null;
  }
}

/**
 * The entries of Node's `subjectAltName` text (`DNS:a, IP Address:198.18.0.5`); a value with a
 * comma, quote or control character comes JSON-quoted (Node ≥ 17.3), so it is read as JSON there.
 */
function subjectAltNames(text: string): Array<{ type: string; value: string }> {
  const names: Array<{ type: string; value: string }> = [];
  let at = 0;
  while (at < text.length) {
    const colon = text.indexOf(':', at);
    if (colon < 0) {
      break;
    }
    const type = text.slice(at, colon);
    let end: number;
    let value: string;
    if (text[colon + 1] === '"') {
      end = colon + 2;
      while (end < text.length && text[end] !== '"') {
        end += text[end] === '\\' ? 2 : 1;
      }
      value = JSON.parse(text.slice(colon + 1, end + 1)) as string;
      end += 1;
    } else {
      end = text.indexOf(', ', colon);
      end = end < 0 ? text.length : end;
      value = text.slice(colon + 1, end);
    }
    names.push({ type, value });
    at = end + 2;
  }
  return names;
}

/** An IP address as Kubernetes writes it: IPv6 compressed and in lower case (OpenSSL prints every group). */
function canonicalIp(address: string): string {
  return address.includes(':') ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address;
}
