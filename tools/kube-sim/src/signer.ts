import type { CertificateAuthority } from './certificate-authority';
import { x509 } from './x509';

/** The signers whose approved CSRs the simulator signs, like kube-controller-manager's csrsigning. */
export const SUPPORTED_SIGNERS = [
  'kubernetes.io/kube-apiserver-client',
  'kubernetes.io/kube-apiserver-client-kubelet',
  'kubernetes.io/kubelet-serving',
] as const;

/** Default validity of signed certificates (kube-controller-manager's --cluster-signing-duration). */
export const DEFAULT_SIGNING_DURATION_MS = 365 * 24 * 3600 * 1000;

const KEY_USAGES: Record<string, x509.KeyUsageFlags> = {
  signing: x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};

const EXTENDED_KEY_USAGES: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': x509.ExtendedKeyUsage.serverAuth,
  'client auth': x509.ExtendedKeyUsage.clientAuth,
  'code signing': x509.ExtendedKeyUsage.codeSigning,
  'email protection': x509.ExtendedKeyUsage.emailProtection,
  's/mime': x509.ExtendedKeyUsage.emailProtection,
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: x509.ExtendedKeyUsage.timeStamping,
  'ocsp signing': x509.ExtendedKeyUsage.ocspSigning,
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Every usage string certificates/v1 accepts. */
export const KNOWN_USAGES: readonly string[] = [...Object.keys(KEY_USAGES), ...Object.keys(EXTENDED_KEY_USAGES)];

/** The parts of a PKCS#10 request the signers look at. */
export interface ParsedRequest {
  csr: x509.Pkcs10CertificateRequest;
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emails: string[];
  uris: string[];
}

/**
 * Parses `spec.request` (PEM `CERTIFICATE REQUEST`, the bytes after base64 decoding); throws when it is not one.
 */
export function parseCertificateRequest(pem: string): ParsedRequest {
  const match = /-----BEGIN (NEW )?CERTIFICATE REQUEST-----[\s\S]+?-----END (NEW )?CERTIFICATE REQUEST-----/.exec(pem);
  if (!match) {
    throw new Error('PEM block type must be CERTIFICATE REQUEST');
  }
  const csr = new x509.Pkcs10CertificateRequest(match[0].replace(/NEW CERTIFICATE REQUEST/g, 'CERTIFICATE REQUEST'));
  const names: x509.GeneralName[] = [];
  for (const ext of csr.extensions) {
    if (ext.type === '2.5.29.17') {
      names.push(...new x509.SubjectAlternativeNameExtension(ext.rawData).names.items);
    }
  }
  const of = (type: string): string[] => names.filter((n) => n.type === type).map((n) => n.value);
  return {
    csr,
    commonName: csr.subjectName.getField('CN')[0] ?? '',
    organizations: csr.subjectName.getField('O'),
    dnsNames: of('dns'),
    ipAddresses: of('ip'),
    emails: of('email'),
    uris: of('url'),
  };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

function checkKubeletIdentity(req: ParsedRequest): string | undefined {
  if (!sameSet(req.organizations, ['system:nodes'])) {
    return 'subject organization is not system:nodes';
  }
  if (!req.commonName.startsWith('system:node:')) {
    return 'subject common name does not begin with system:node:';
  }
  if (req.emails.length > 0) {
    return 'email subjectAltNames are not allowed';
  }
  if (req.uris.length > 0) {
    return 'URI subjectAltNames are not allowed';
  }
  return undefined;
}

/**
 * Checks a request against the rules of its signer, returning the reason it cannot be signed.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#kubernetes-signers
 */
export function signerValidationError(signerName: string, req: ParsedRequest, usages: readonly string[]): string | undefined {
  switch (signerName) {
    case 'kubernetes.io/kube-apiserver-client-kubelet': {
      const identity = checkKubeletIdentity(req);
      if (identity) {
        return identity;
      }
      if (req.dnsNames.length > 0) {
        return 'DNS subjectAltNames are not allowed';
      }
      if (req.ipAddresses.length > 0) {
        return 'IP subjectAltNames are not allowed';
      }
      const ok = sameSet(usages, ['digital signature', 'client auth']) || sameSet(usages, ['key encipherment', 'digital signature', 'client auth']);
      return ok ? undefined : `usages did not match [digital signature client auth] or [key encipherment digital signature client auth]: ${JSON.stringify(usages)}`;
    }
    case 'kubernetes.io/kubelet-serving': {
      const identity = checkKubeletIdentity(req);
      if (identity) {
        return identity;
      }
      if (req.dnsNames.length === 0 && req.ipAddresses.length === 0) {
        return 'DNS or IP subjectAltName is required';
      }
      const ok = sameSet(usages, ['digital signature', 'server auth']) || sameSet(usages, ['key encipherment', 'digital signature', 'server auth']);
      return ok ? undefined : `usages did not match [digital signature server auth] or [key encipherment digital signature server auth]: ${JSON.stringify(usages)}`;
    }
    case 'kubernetes.io/kube-apiserver-client': {
      if (!usages.includes('client auth')) {
        return 'usages must include client auth';
      }
      const extra = usages.filter((u) => !['digital signature', 'key encipherment', 'client auth'].includes(u));
      return extra.length > 0 ? `usages ${JSON.stringify(extra)} are not allowed for this signer` : undefined;
    }
    default:
      return `signer ${signerName} is not supported`;
  }
}

/**
 * Issues the certificate for a validated request: subject and SANs from the request, key usages and
 * EKUs from `usages`, validity from `expirationSeconds` (at least 10 minutes) or a year.
 * Verifies the request's self-signature first.
 */
export async function signCertificateRequest(
  ca: CertificateAuthority,
  req: ParsedRequest,
  usages: readonly string[],
  expirationSeconds?: number,
): Promise<string> {
  if (!(await req.csr.verify())) {
    throw new Error('CSR signature verification failed');
  }
  const keyUsages = usages.reduce((flags, u) => flags | (KEY_USAGES[u] ?? 0), 0);
  const extendedKeyUsages = usages.map((u) => EXTENDED_KEY_USAGES[u]).filter((oid): oid is string => oid !== undefined);
  const sans: x509.JsonGeneralNames = [
    ...req.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...req.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...req.emails.map((value) => ({ type: 'email' as const, value })),
    ...req.uris.map((value) => ({ type: 'url' as const, value })),
  ];
  const durationMs = expirationSeconds !== undefined ? Math.max(600, expirationSeconds) * 1000 : DEFAULT_SIGNING_DURATION_MS;
  const cert = await ca.issue({ subject: req.csr.subjectName, publicKey: req.csr.publicKey, sans, keyUsages, extendedKeyUsages, durationMs });
  return cert.toString('pem');
}
