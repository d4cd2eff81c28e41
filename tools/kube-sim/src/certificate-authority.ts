import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SYSTEM_CLOCK, type KubeSimClock } from './clock';
import { x509 } from './x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const EC_SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
/** Certificates are backdated like the Kubernetes signer does, to tolerate clock skew. */
const BACKDATE_MS = 5 * 60 * 1000;

/** What the CA needs to issue a certificate. */
export interface IssueRequest {
  subject: string | x509.Name;
  publicKey: x509.PublicKey | CryptoKey;
  sans?: x509.JsonGeneralNames;
  keyUsages: x509.KeyUsageFlags;
  extendedKeyUsages: string[];
  /** Validity in milliseconds from now. */
  durationMs: number;
}

/** A certificate and its private key, both PEM. */
export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

function toPem(der: ArrayBuffer, tag: string): string {
  return x509.PemConverter.encode(der, tag);
}

/** A fresh ECDSA P-256 key pair usable for signing. */
export async function generateKeyPair(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify']);
}

/** PKCS#8 PEM of a private key. */
export async function privateKeyPem(key: CryptoKey): Promise<string> {
  return toPem(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return bytes.toString('hex');
}

/**
 * The simulator's cluster CA: signs its serving certificate, the admin client certificate and every
 * approved CSR; client certificates it issued authenticate (CN = user, O = groups).
 * @see https://kubernetes.io/docs/setup/best-practices/certificates/
 */
export class CertificateAuthority {
  private constructor(
    readonly cert: x509.X509Certificate,
    private readonly signingKey: CryptoKey,
    readonly keyPem: string,
    private readonly clock: KubeSimClock,
  ) {}

  /** PEM of the CA certificate. */
  get certPem(): string {
    return this.cert.toString('pem');
  }

  /**
   * Creates a self-signed CA valid for ten years. `clock` dates it and every certificate it issues;
   * TLS peers check those dates against their own clock, so a fake one should start at the real time.
   */
  static async create(commonName = 'kube-sim-ca', clock: KubeSimClock = SYSTEM_CLOCK): Promise<CertificateAuthority> {
    const keys = await generateKeyPair();
    const now = clock.now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerial(),
      name: `CN=${commonName}`,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(now + 10 * 365 * 24 * 3600 * 1000),
      keys,
      signingAlgorithm: EC_SIGN,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return new CertificateAuthority(cert, keys.privateKey, await privateKeyPem(keys.privateKey), clock);
  }

  /** Loads a CA from PEM (an ECDSA P-256 key, as written by {@link CertificateAuthority.save}). */
  static async load(certPem: string, keyPem: string, clock: KubeSimClock = SYSTEM_CLOCK): Promise<CertificateAuthority> {
    const der = createPrivateKey(keyPem).export({ format: 'der', type: 'pkcs8' });
    const key = await webcrypto.subtle.importKey('pkcs8', der, EC_KEY, true, ['sign']);
    return new CertificateAuthority(new x509.X509Certificate(certPem), key, keyPem, clock);
  }

  /** Loads `ca.crt`/`ca.key` from a state directory, creating and saving them on first use. */
  static async loadOrCreate(stateDir: string, clock: KubeSimClock = SYSTEM_CLOCK): Promise<CertificateAuthority> {
    const certPath = join(stateDir, 'ca.crt');
    const keyPath = join(stateDir, 'ca.key');
    try {
      return await CertificateAuthority.load(await readFile(certPath, 'utf8'), await readFile(keyPath, 'utf8'), clock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw error;
      }
    }
    const ca = await CertificateAuthority.create(undefined, clock);
    await mkdir(stateDir, { recursive: true });
    await writeFile(certPath, ca.certPem, { mode: 0o644 });
    await writeFile(keyPath, ca.keyPem, { mode: 0o600 });
    return ca;
  }

  /** Issues a certificate for a public key; validity is capped by the CA's own. */
  async issue(request: IssueRequest): Promise<x509.X509Certificate> {
    const now = this.clock.now();
    const notBefore = new Date(Math.max(now - BACKDATE_MS, this.cert.notBefore.getTime()));
    const notAfter = new Date(Math.min(now + request.durationMs, this.cert.notAfter.getTime()));
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(request.keyUsages, true),
      await x509.AuthorityKeyIdentifierExtension.create(this.cert.publicKey),
    ];
    if (request.extendedKeyUsages.length > 0) {
      extensions.push(new x509.ExtendedKeyUsageExtension(request.extendedKeyUsages));
    }
    if (request.sans && request.sans.length > 0) {
      extensions.push(new x509.SubjectAlternativeNameExtension(request.sans));
    }
    return x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: request.subject,
      issuer: this.cert.subjectName,
      notBefore,
      notAfter,
      publicKey: request.publicKey,
      signingKey: this.signingKey,
      signingAlgorithm: EC_SIGN,
      extensions,
    });
  }

  /** Issues a certificate together with a fresh key (serving certificate, admin client certificate). */
  async issueKeyPair(subject: string | x509.Name, options: { sans?: x509.JsonGeneralNames; server?: boolean; client?: boolean; durationMs?: number }): Promise<KeyPairPem> {
    const keys = await generateKeyPair();
    const eku: string[] = [];
    if (options.server) {
      eku.push(x509.ExtendedKeyUsage.serverAuth);
    }
    if (options.client) {
      eku.push(x509.ExtendedKeyUsage.clientAuth);
    }
    const cert = await this.issue({
      subject,
      publicKey: keys.publicKey,
      sans: options.sans,
      keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      extendedKeyUsages: eku,
      durationMs: options.durationMs ?? 365 * 24 * 3600 * 1000,
    });
    return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
  }

  /** Checks a certificate was signed by this CA and is within its validity (now, by the CA's clock). */
  async verifies(cert: x509.X509Certificate, at = new Date(this.clock.now())): Promise<boolean> {
    return cert.verify({ publicKey: this.cert.publicKey, date: at });
  }
}
