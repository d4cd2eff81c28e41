// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
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

/**
 * Parses a PKCS#10 certificate request (PEM, base64 of PEM as in a CSR's `spec.request`, or DER)
 * and checks its self-signature. Never throws: a request that is not one gives `{ ok: false }`.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/
 * @see https://datatracker.ietf.org/doc/html/rfc2986
 */
export async function parseCertificateRequest(input: string | Uint8Array): Promise<CertificateRequestParse> {
  let csr: Pkcs10CertificateRequest;
  try {
    const der = derOf(input);
    csr = new Pkcs10CertificateRequest(Buffer.from(der));
  } catch (error) {
    return { ok: false, error: `not a PKCS#10 certificate request: ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    const names: GeneralName[] = csr.extensions.filter((ext) => ext.type === EXTENSION_SAN).flatMap((ext) => new SubjectAlternativeNameExtension(ext.rawData).names.items);
    const ofType = (type: string): string[] => names.filter((entry) => entry.type === type).map((entry) => entry.value);
    let signatureValid = false;
    try {
      signatureValid = await csr.verify(webcrypto as unknown as CryptoProvider);
    } catch {
      // An algorithm WebCrypto cannot verify counts as an unverified signature.
    }
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
