// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect polyfill first.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;

/** A certificate and its private key, both PEM. */
export interface TestCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A CA, or a server certificate signed by `issuer` (self-signed without one), for TLS tests. */
export async function testCertificate(options: {
  readonly commonName: string;
  readonly ca?: boolean;
  readonly issuer?: TestCertificate;
  readonly dnsNames?: readonly string[];
  readonly ips?: readonly string[];
  readonly notAfter?: Date;
}): Promise<TestCertificate> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const issuerCert = options.issuer ? new x509.X509Certificate(options.issuer.certPem) : null;
  const signingKey = options.issuer
    ? await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(options.issuer.keyPem), ALGORITHM, false, ['sign'])
    : keys.privateKey;
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const names = [...(options.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })), ...(options.ips ?? []).map((value) => ({ type: 'ip' as const, value }))];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: `CN=${options.commonName}`,
    issuer: issuerCert?.subject ?? `CN=${options.commonName}`,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: options.notAfter ?? new Date(Date.now() + 30 * DAY_MS),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey,
    extensions: [
      new x509.BasicConstraintsExtension(options.ca === true, undefined, true),
      new x509.KeyUsagesExtension(options.ca === true ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature : x509.KeyUsageFlags.digitalSignature, true),
      ...(options.ca === true ? [] : [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth])]),
      ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : []),
    ],
  });
  const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { certPem: cert.toString('pem'), keyPem };
}
