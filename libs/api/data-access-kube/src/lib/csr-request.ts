// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { createPublicKey, verify as verifySignature, webcrypto } from 'node:crypto';
import { Pkcs10CertificateRequest, SubjectAlternativeNameExtension, type GeneralName } from '@peculiar/x509';

/** A WebCrypto algorithm description (what @peculiar/x509 reports for keys and signatures). */
type Algorithm = webcrypto.Algorithm;
/** The crypto provider argument of `verify`. */
type CryptoProvider = Parameters<Pkcs10CertificateRequest['verify']>[0];

/** The public key of a request. */
export interface RequestPublicKey {
  /** `RSA`, `EC`, `Ed25519`, `Ed448`, or the WebCrypto name of anything else. */
  algorithm: string;
  /** Modulus length (RSA) or curve size (EC); null when not known. */
  bits: number | null;
  /** Named curve (`P-256`, ...) of EC keys. */
  curve: string | null;
}

/** What a PKCS#10 request asks for, as a CSR policy needs to see it. */
export interface ParsedCertificateRequest {
  /** The subject, e.g. `CN=system:node:w1, O=system:nodes`. */
  subject: string;
  commonName: string | null;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  /** Present so a policy can refuse them: kubelets never ask for these. */
  emailAddresses: string[];
  uris: string[];
  /** SAN entries of other kinds (directory names, registered IDs, ...). */
  otherNames: string[];
  publicKey: RequestPublicKey;
  /** e.g. `ECDSA with SHA-256`. */
  signatureAlgorithm: string;
  /** The request is signed by the private key of the public key it carries (proof of possession). */
  signatureValid: boolean;
}

/** A parsed request, or why it could not be parsed. */
export type CertificateRequestParse = { ok: true; request: ParsedCertificateRequest } | { ok: false; error: string };

const PEM_BLOCK = /-----BEGIN (?:NEW )?CERTIFICATE REQUEST-----([A-Za-z0-9+/=\s]+?)-----END (?:NEW )?CERTIFICATE REQUEST-----/;
const EXTENSION_SAN = '2.5.29.17';

function keyOf(algorithm: Algorithm): RequestPublicKey {
  const fields = algorithm as Algorithm & { modulusLength?: number; namedCurve?: string };
  if (fields.name.startsWith('RSA')) {
    return { algorithm: 'RSA', bits: fields.modulusLength ?? null, curve: null };
  }
  if (fields.name === 'ECDSA' || fields.name === 'ECDH') {
    const size = /^P-(\d+)$/.exec(fields.namedCurve ?? '');
    return { algorithm: 'EC', bits: size ? Number(size[1]) : null, curve: fields.namedCurve ?? null };
  }
  if (fields.name === 'Ed25519' || fields.name === 'Ed448') {
    return { algorithm: fields.name, bits: fields.name === 'Ed25519' ? 256 : 456, curve: fields.name };
  }
  return { algorithm: fields.name, bits: null, curve: null };
}

function signatureName(algorithm: unknown): string {
  const fields = algorithm as { name?: unknown; hash?: { name?: unknown } };
  const name = typeof fields.name === 'string' ? fields.name : 'unknown';
  return typeof fields.hash?.name === 'string' ? `${name} with ${fields.hash.name}` : name;
}

/** The DER bytes of a request given as PEM text, base64 of PEM (`spec.request` in JSON) or DER. */
function derOf(input: string | Uint8Array): Uint8Array {
  let text: string | null = null;
  if (typeof input === 'string') {
    text = input.includes('-----BEGIN') ? input : Buffer.from(input, 'base64').toString('latin1');
  } else if (Buffer.from(input.subarray(0, 11)).toString('latin1') === '-----BEGIN ') {
    text = Buffer.from(input).toString('latin1');
  }
  if (text === null) {
    return input as Uint8Array;
  }
  const block = PEM_BLOCK.exec(text);
  if (!block) {
    throw new Error('no PEM block of type CERTIFICATE REQUEST');
  }
  return Buffer.from(block[1].replace(/\s+/g, ''), 'base64');
}

/** The length of a DER element's header and of its content, at `at`. */
function derHeader(der: Uint8Array, at: number): { readonly header: number; readonly length: number } {
  const first = der[at + 1];
  if (first < 0x80) {
    return { header: 2, length: first };
  }
  const octets = first & 0x7f;
  let length = 0;
  for (let index = 0; index < octets; index += 1) {
    length = length * 256 + der[at + 2 + index];
  }
  return { header: 2 + octets, length };
}

/** The signed part of a request (RFC 2986: the first element of the outer SEQUENCE), exactly as it was signed. */
function certificationRequestInfoOf(der: Uint8Array): Buffer {
  const outer = derHeader(der, 0);
  const info = derHeader(der, outer.header);
  return Buffer.from(der.subarray(outer.header, outer.header + info.header + info.length));
}

/** The OpenSSL digest of a WebCrypto hash name (`SHA-256` → `sha256`). */
function digestOf(algorithm: unknown): string | null {
  const name = (algorithm as { hash?: { name?: unknown } }).hash?.name;
  return typeof name === 'string' && /^SHA-(256|384|512)$/.test(name) ? name.replace('-', '').toLowerCase() : null;
}

/**
 * Whether the request is signed by the private key of the public key it carries. ECDSA, RSA
 * PKCS#1 v1.5 and Ed25519 (what kubelets and tools sign with) are checked by OpenSSL directly on
 * the signed bytes: the library's WebCrypto path serialises and imports the key again per request,
 * and a join storm checks hundreds of them. Anything else (RSA-PSS, say) goes through the library.
 * An algorithm neither can check counts as an unverified signature.
 */
async function proofOfPossession(csr: Pkcs10CertificateRequest, der: Uint8Array): Promise<boolean> {
  try {
    const signed = certificationRequestInfoOf(der);
    const signature = Buffer.from(csr.signature);
    const algorithm = csr.signatureAlgorithm as unknown as Algorithm;
    const key = () => createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' });
    const digest = digestOf(algorithm);
    if (algorithm.name === 'ECDSA' && digest) {
      return verifySignature(digest, signed, { key: key(), dsaEncoding: 'der' }, signature);
    }
    if (algorithm.name === 'RSASSA-PKCS1-v1_5' && digest) {
      return verifySignature(digest, signed, key(), signature);
    }
    if (algorithm.name === 'Ed25519') {
      return verifySignature(null, signed, key(), signature);
    }
    return await csr.verify(webcrypto as unknown as CryptoProvider);
  } catch {
    return false;
  }
}

/**
 * Parses a PKCS#10 certificate request (PEM, base64 of PEM as in a CSR's `spec.request`, or DER)
 * and checks its self-signature. Never throws: a request that is not one gives `{ ok: false }`.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/
 * @see https://datatracker.ietf.org/doc/html/rfc2986
 */
export async function parseCertificateRequest(input: string | Uint8Array): Promise<CertificateRequestParse> {
  let csr: Pkcs10CertificateRequest;
  let der: Uint8Array;
  try {
    der = derOf(input);
    csr = new Pkcs10CertificateRequest(Buffer.from(der));
  } catch (error) {
    return { ok: false, error: `not a PKCS#10 certificate request: ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    const names: GeneralName[] = csr.extensions.filter((ext) => ext.type === EXTENSION_SAN).flatMap((ext) => new SubjectAlternativeNameExtension(ext.rawData).names.items);
    const ofType = (type: string): string[] => names.filter((entry) => entry.type === type).map((entry) => entry.value);
    const signatureValid = await proofOfPossession(csr, der);
    return {
      ok: true,
      request: {
        subject: csr.subject,
        commonName: csr.subjectName.getField('CN')[0] ?? null,
        organizations: csr.subjectName.getField('O'),
        dnsNames: ofType('dns'),
        ipAddresses: ofType('ip'),
        emailAddresses: ofType('email'),
        uris: ofType('url'),
        otherNames: names.filter((entry) => !['dns', 'ip', 'email', 'url'].includes(entry.type)).map((entry) => `${entry.type}:${entry.value}`),
        publicKey: keyOf(csr.publicKey.algorithm),
        signatureAlgorithm: signatureName(csr.signatureAlgorithm),
        signatureValid,
      },
    };
  } catch (error) {
    return { ok: false, error: `unreadable certificate request: ${error instanceof Error ? error.message : String(error)}` };
  }
}
