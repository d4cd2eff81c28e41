import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * The lab's own certificates: a CA for the machine config server (its PEM
 * goes into lab.json as `machineConfigCaCert`) and the server certificate it
 * signs for the VIP.
 */
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;

/** A certificate and its private key, both PEM. */
export interface CertifiedKey {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Creates a self-signed CA valid for ten years. */
export async function createCertificateAuthority(commonName: string): Promise<CertifiedKey> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}, OU=openshift`,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 3650 * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKey(keys.privateKey) };
}

/** Issues a server certificate for the given names and addresses, signed by `ca`. */
export async function issueServerCertificate(
  ca: CertifiedKey,
  subject: { readonly commonName: string; readonly dnsNames: readonly string[]; readonly ips: readonly string[] },
): Promise<CertifiedKey> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.keyPem), ALGORITHM, false, ['sign']);
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${subject.commonName}`,
    issuer: caCert.subject,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 365 * DAY_MS),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...subject.dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...subject.ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKey(keys.privateKey) };
}

/** The DNS and IP subject alternative names of a PEM certificate. */
export function subjectAltNames(certPem: string): { dns: string[]; ips: string[] } {
  const cert = new x509.X509Certificate(certPem);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.toJSON() ?? [];
  return {
    dns: names.filter((name) => name.type === 'dns').map((name) => name.value),
    ips: names.filter((name) => name.type === 'ip').map((name) => name.value),
  };
}

async function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function serial(): string {
  // A positive serial: clear the top bit.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}
