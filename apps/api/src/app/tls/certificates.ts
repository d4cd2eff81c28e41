// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect polyfill
// (main.ts loads it first; this import makes the module safe on its own, e.g. in specs).
import 'reflect-metadata';
import { X509Certificate, createHash, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;

/** A certificate and its private key, both PEM. */
export interface CertifiedKey {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A CA valid for ten years: its certificate is what agents pin, so it must outlive many runs. */
export async function generateCertificateAuthority(commonName: string, now = new Date()): Promise<CertifiedKey> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${commonName}`,
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter: new Date(now.getTime() + 3650 * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      // pathLength 0: the CA signs server certificates only, never another CA.
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKey(keys.privateKey) };
}

/** A server certificate for `names` (DNS names and IP addresses), signed by `ca`, with a fresh key. */
export function issueServerCertificate(ca: CertifiedKey, names: readonly string[], validDays: number, now = new Date()): Promise<CertifiedKey> {
  const unique = [...new Set(names.map((name) => name.toLowerCase()))];
  return issueLeafCertificate(ca, {
    subject: 'CN=ccos-scaler',
    usage: x509.ExtendedKeyUsage.serverAuth,
    altNames: unique.map((value) => ({ type: isIP(value) === 0 ? ('dns' as const) : ('ip' as const), value })),
  }, validDays, now);
}

/** A client certificate with subject CN=`commonName`, signed by `ca`, with a fresh key (mTLS clients such as cluster-autoscaler). */
export function issueClientCertificate(ca: CertifiedKey, commonName: string, validDays: number, now = new Date()): Promise<CertifiedKey> {
  return issueLeafCertificate(ca, { subject: `CN=${commonName}`, usage: x509.ExtendedKeyUsage.clientAuth, altNames: [] }, validDays, now);
}

interface LeafProfile {
  readonly subject: string;
  readonly usage: x509.ExtendedKeyUsageType;
  readonly altNames: readonly x509.JsonGeneralName[];
}

/** An end-entity certificate signed by `ca`, with a fresh key: digital signature only, one extended usage. */
async function issueLeafCertificate(ca: CertifiedKey, profile: LeafProfile, validDays: number, now: Date): Promise<CertifiedKey> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.keyPem), ALGORITHM, false, ['sign']);
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: profile.subject,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - DAY_MS),
    notAfter: new Date(now.getTime() + validDays * DAY_MS),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([profile.usage]),
      ...(profile.altNames.length === 0 ? [] : [new x509.SubjectAlternativeNameExtension([...profile.altNames])]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKey(keys.privateKey) };
}

/** Every certificate of a PEM bundle, in order. */
export function splitPemCertificates(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((block) => new X509Certificate(block));
}

/** base64 sha256 of a certificate's SubjectPublicKeyInfo (RFC 7469's pin-sha256). */
export function publicKeySha256(certificate: X509Certificate): string {
  return createHash('sha256').update(certificate.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
}

/** Whether the certificate names `host` (a DNS name or an IP address, brackets allowed). */
export function certificateNames(certificate: X509Certificate, host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return isIP(bare) === 0 ? certificate.checkHost(bare) !== undefined : certificate.checkIP(bare) !== undefined;
}

async function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}
