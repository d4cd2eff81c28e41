import type { X509Certificate } from 'node:crypto';
import { type StatsListener, unwatchFile, watchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { AgentServiceTls } from '@ccos/api/feature-installs';
import { type CertifiedKey, certificateNames, issueServerCertificate, publicKeySha256, splitPemCertificates } from './certificates';

/** Where the service's certificate comes from. */
export type CertificateSource = 'GENERATED' | 'FILES';

/** TLS_CERT_FILE, TLS_KEY_FILE and the optional TLS_CA_FILE. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string | null;
}

/** The certificate the server presents now, checked. */
interface Material {
  readonly cert: string;
  readonly key: string;
  readonly leaf: X509Certificate;
  /** PEM of the CA(s) that issued it, when known (the generated CA, or TLS_CA_FILE). */
  readonly caPem: string | null;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The service's HTTPS certificate and what an agent must pin to recognise it. Either
 * operator files (TLS_CERT_FILE/TLS_KEY_FILE, optional TLS_CA_FILE), watched and
 * reloaded when they change, or a server certificate this process issues from the CA
 * the replicas share. Listeners hear of every new certificate (the HTTPS server swaps
 * its secure context; open connections keep theirs).
 */
export class ServiceTls {
  private readonly listeners = new Set<() => void>();
  private readonly stops: Array<() => void> = [];
  private renewal: { readonly issue: () => Promise<Material>; readonly withinMs: number; readonly now: () => Date } | null = null;

  private constructor(
    readonly source: CertificateSource,
    private material: Material,
    private readonly logger: Logger,
  ) {}

  /** Loads the operator's files (refusing a bad set) and reloads them when they change. */
  static async fromFiles(files: TlsFiles, logger: Logger, options: { readonly pollIntervalMs?: number } = {}): Promise<ServiceTls> {
    const tls = new ServiceTls('FILES', await readTlsFiles(files), logger);
    tls.watch(files, options.pollIntervalMs ?? 5_000);
    tls.logLoaded('TLS certificate loaded from TLS_CERT_FILE');
    return tls;
  }

  /** Issues this replica's server certificate from the shared CA, renewed well before it expires. */
  static async generated(
    ca: CertifiedKey,
    names: readonly string[],
    logger: Logger,
    options: { readonly validDays?: number; readonly renewWithinDays?: number; readonly checkIntervalMs?: number; readonly now?: () => Date } = {},
  ): Promise<ServiceTls> {
    const validDays = options.validDays ?? 90;
    const now = options.now ?? (() => new Date());
    const issue = async (): Promise<Material> => {
      const server = await issueServerCertificate(ca, names, validDays, now());
      return { cert: server.certPem, key: server.keyPem, leaf: splitPemCertificates(server.certPem)[0] as X509Certificate, caPem: ca.certPem };
    };
    const tls = new ServiceTls('GENERATED', await issue(), logger);
    tls.renewal = { issue, withinMs: (options.renewWithinDays ?? 30) * DAY_MS, now };
    const timer = setInterval(() => {
      void tls.renewIfDue().catch((error: unknown) => logger.error({ err: error }, 'could not renew the TLS certificate'));
    }, options.checkIntervalMs ?? 12 * 3600_000);
    timer.unref();
    tls.stops.push(() => clearInterval(timer));
    tls.logLoaded('TLS certificate issued from the service CA');
    return tls;
  }

  /** Reissues a generated certificate that is close to expiry; true when it did. */
  async renewIfDue(): Promise<boolean> {
    const renewal = this.renewal;
    if (renewal === null || new Date(this.material.leaf.validTo).getTime() - renewal.now().getTime() > renewal.withinMs) {
      return false;
    }
    this.replace(await renewal.issue(), 'TLS certificate renewed from the service CA');
    return true;
  }

  /** `cert` and `key` for `https.createServer` / `setSecureContext`. */
  serverOptions(): { readonly cert: string; readonly key: string } {
    return { cert: this.material.cert, key: this.material.key };
  }

  /** The certificate served now. */
  certificate(): X509Certificate {
    return this.material.leaf;
  }

  /** PEM of the CA a client may trust (the generated CA or TLS_CA_FILE), or null when unknown. */
  caCertificates(): string | null {
    return this.material.caPem;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * What the agent of a run reaching us at `apiUrl` must pin (written into its config
   * over the pinned-host-key SSH session).
   *
   * - Generated: our own CA, and no name check. Nobody but this service holds a
   *   certificate from that CA, so the chain alone identifies us; and hosts reach us by
   *   whatever address they see (the derived URL is where our SSH connection came from,
   *   a NAT address, a VIP), which the certificate cannot be expected to name.
   * - Operator files with TLS_CA_FILE, when the certificate names the URL's host: that
   *   CA plus the name check. Such a CA (corporate, public, a cluster's service CA) signs
   *   other servers too, so the CA alone would accept any of them; the name is what
   *   singles us out. It survives the operator rotating key and certificate mid-run.
   * - Otherwise (no CA given, or the certificate does not name that host): the public key
   *   of the certificate served now. It accepts this key only, whoever signed it; the
   *   price is that a run started before a key rotation fails with a clear reason and its
   *   retry pins the new key.
   */
  agentPin(apiUrl: string): AgentServiceTls {
    const { leaf, caPem } = this.material;
    if (this.source === 'GENERATED' && caPem !== null) {
      return { caCertificates: caPem };
    }
    if (caPem !== null && certificateNames(leaf, new URL(apiUrl).hostname)) {
      return { caCertificates: caPem, verifyHostname: true };
    }
    return { publicKeySha256: [publicKeySha256(leaf)] };
  }

  close(): void {
    for (const stop of this.stops.splice(0)) {
      stop();
    }
    this.listeners.clear();
  }

  private watch(files: TlsFiles, intervalMs: number): void {
    let timer: NodeJS.Timeout | null = null;
    const reload = async () => {
      timer = null;
      try {
        this.replace(await readTlsFiles(files), 'TLS certificate reloaded from TLS_CERT_FILE');
      } catch (error) {
        // Often the first of two files written one after the other: the next change completes the pair.
        this.logger.warn({ err: error }, 'TLS files changed but cannot be used; still serving the previous certificate');
      }
    };
    // Cert and key usually change together: one reload for both.
    const changed: StatsListener = (current, previous) => {
      if (current.mtimeMs === previous.mtimeMs && current.ino === previous.ino && current.size === previous.size) {
        return;
      }
      timer ??= setTimeout(() => void reload(), Math.min(200, intervalMs));
    };
    // Polling follows symlinks, so a Kubernetes Secret volume's atomic swap of `..data` is seen too.
    for (const path of [files.certFile, files.keyFile, ...(files.caFile === null ? [] : [files.caFile])]) {
      watchFile(path, { interval: intervalMs, persistent: false }, changed);
      this.stops.push(() => unwatchFile(path, changed));
    }
    this.stops.push(() => {
      if (timer !== null) {
        clearTimeout(timer);
      }
    });
  }

  private replace(material: Material, message: string): void {
    this.material = material;
    this.logLoaded(message);
    for (const listener of this.listeners) {
      listener();
    }
  }

  private logLoaded(message: string): void {
    const { leaf } = this.material;
    this.logger.info({ subject: leaf.subject, fingerprint256: leaf.fingerprint256, validTo: leaf.validTo, names: leaf.subjectAltName }, message);
  }
}

/**
 * Reads and checks the operator's files: a certificate (chain) and its private key, not
 * expired, and, with a CA file, a chain that leads to it. Any problem is an error naming
 * the file, so a bad set is refused at start and never replaces a good one on reload.
 */
export async function readTlsFiles(files: TlsFiles, now = new Date()): Promise<Material> {
  const [cert, key, ca] = await Promise.all([
    readFile(files.certFile, 'utf8'),
    readFile(files.keyFile, 'utf8'),
    files.caFile === null ? Promise.resolve(null) : readFile(files.caFile, 'utf8'),
  ]);
  const chain = splitPemCertificates(cert);
  const leaf = chain[0];
  if (leaf === undefined) {
    throw new Error(`TLS_CERT_FILE ${files.certFile} holds no PEM certificate`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new Error(`TLS_KEY_FILE ${files.keyFile} is not the private key of the certificate in TLS_CERT_FILE ${files.certFile} (${(error as Error).message})`, { cause: error });
  }
  if (now < new Date(leaf.validFrom) || now > new Date(leaf.validTo)) {
    throw new Error(`the certificate in TLS_CERT_FILE ${files.certFile} is valid only from ${leaf.validFrom} to ${leaf.validTo}`);
  }
  for (let index = 0; index + 1 < chain.length; index += 1) {
    const [child, parent] = [chain[index] as X509Certificate, chain[index + 1] as X509Certificate];
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey)) {
      throw new Error(`TLS_CERT_FILE ${files.certFile}: certificate ${index + 1} ("${child.subject}") is not signed by the next one ("${parent.subject}")`);
    }
  }
  let caPem: string | null = null;
  if (ca !== null) {
    const authorities = splitPemCertificates(ca);
    if (authorities.length === 0) {
      throw new Error(`TLS_CA_FILE ${files.caFile} holds no PEM certificate`);
    }
    const top = chain.at(-1) as X509Certificate;
    const anchored = authorities.some((authority) => authority.fingerprint256 === top.fingerprint256 || (top.checkIssued(authority) && top.verify(authority.publicKey)));
    if (!anchored) {
      throw new Error(`the chain in TLS_CERT_FILE ${files.certFile} does not lead to a certificate in TLS_CA_FILE ${files.caFile} (it ends at "${top.issuer}")`);
    }
    caPem = ca;
  }
  return { cert, key, leaf, caPem };
}
