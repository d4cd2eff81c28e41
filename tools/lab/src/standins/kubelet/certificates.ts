import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * Keys and certificate requests as the kubelet makes them: ECDSA P-256 keys,
 * PKCS#10 requests with the node's subject (and SANs for serving), PEM
 * files holding certificate and key together.
 */
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A fresh key pair and the PEM of its private key (PKCS#8). */
export interface KeyMaterial {
  readonly keys: webcrypto.CryptoKeyPair;
  readonly privateKeyPem: string;
}

/** Generates an ECDSA P-256 key pair. */
export async function generateKey(): Promise<KeyMaterial> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { keys, privateKeyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
}

/** A PEM certificate request for `O=system:nodes, CN=system:node:<node>`, with SANs when given. */
export async function nodeCertificateRequest(
  nodeName: string,
  key: KeyMaterial,
  sans: { readonly dns: readonly string[]; readonly ips: readonly string[] } | null,
): Promise<string> {
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ O: ['system:nodes'] }, { CN: [`system:node:${nodeName}`] }],
    keys: key.keys,
    signingAlgorithm: ALGORITHM,
    extensions: sans === null
      ? []
      : [new x509.SubjectAlternativeNameExtension([
        ...sans.dns.map((value) => ({ type: 'dns' as const, value })),
        ...sans.ips.map((value) => ({ type: 'ip' as const, value })),
      ])],
  });
  return csr.toString('pem');
}

/** When a PEM certificate expires, or null when the text holds no certificate. */
export function certificateNotAfter(pem: string): Date | null {
  const match = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem);
  if (match === null) {
    return null;
  }
  try {
    return new x509.X509Certificate(match[0]).notAfter;
  } catch {
    return null;
  }
}

/** The validity of the first certificate in a PEM text, or null when it holds none. */
export function certificateValidity(pem: string): { notBefore: Date; notAfter: Date } | null {
  const match = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem);
  if (match === null) {
    return null;
  }
  try {
    const certificate = new x509.X509Certificate(match[0]);
    return { notBefore: certificate.notBefore, notAfter: certificate.notAfter };
  } catch {
    return null;
  }
}
