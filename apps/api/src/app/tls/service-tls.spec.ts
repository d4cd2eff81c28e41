import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { type Agent, type AgentOptions, Agent as TlsAgent, createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import pino from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ServiceCaStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase } from '@ccos/api/data-access-db/testing';
import { SecretBox } from '@ccos/api/util-secrets';
import { type CertifiedKey, generateCertificateAuthority, issueServerCertificate, publicKeySha256 } from './certificates';
import { loadOrCreateServiceCa } from './service-ca.store';
import { ServiceTls, readTlsFiles } from './service-tls';

const logger = pino({ level: 'silent' });
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

/** Resolves the next time the certificate changes. */
const nextChange = (tls: ServiceTls) => new Promise<void>((resolve) => {
  const stop = tls.onChange(() => {
    stop();
    resolve();
  });
});

describe('ServiceTls from TLS_CERT_FILE / TLS_KEY_FILE', () => {
  let dir: string;
  let ca: CertifiedKey;
  let first: CertifiedKey;
  let second: CertifiedKey;
  const open: ServiceTls[] = [];

  beforeAll(async () => {
    ca = await generateCertificateAuthority('operator CA');
    first = await issueServerCertificate(ca, ['scaler.example.com', '10.0.0.5'], 30);
    second = await issueServerCertificate(ca, ['scaler.example.com', '10.0.0.5'], 30);
  });
  afterEach(async () => {
    for (const tls of open.splice(0)) {
      tls.close();
    }
    await rm(dir, { recursive: true, force: true });
  });
  const files = async (material: CertifiedKey, caPem: string | null = ca.certPem) => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-tls-'));
    await writeFile(join(dir, 'tls.crt'), material.certPem);
    await writeFile(join(dir, 'tls.key'), material.keyPem);
    if (caPem !== null) {
      await writeFile(join(dir, 'ca.crt'), caPem);
    }
    return { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caFile: caPem === null ? null : join(dir, 'ca.crt') };
  };
  const start = async (paths: Awaited<ReturnType<typeof files>>, log = logger) => {
    const tls = await ServiceTls.fromFiles(paths, log, { pollIntervalMs: 50 });
    open.push(tls);
    return tls;
  };

  it('reloads a changed certificate without dropping the server: open connections keep theirs, new ones get the new one', async () => {
    const paths = await files(first);
    const tls = await start(paths);
    const server = createServer(tls.serverOptions(), (_req, res) => res.end('ok'));
    tls.onChange(() => server.setSecureContext(tls.serverOptions()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const keepAlive = new TlsAgent({ keepAlive: true, maxSockets: 1, ca: ca.certPem, checkServerIdentity: () => undefined } satisfies AgentOptions);
    const fresh = () => new TlsAgent({ ca: ca.certPem, checkServerIdentity: () => undefined });
    const get = (agent: Agent) => new Promise<{ fingerprint: string; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, agent }, (res) => {
        const served = new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw).fingerprint256;
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ fingerprint: served, body }));
      });
      req.on('error', reject);
      req.end();
    });
    try {
      expect(await get(keepAlive)).toEqual({ fingerprint: fingerprint(first.certPem), body: 'ok' });

      // A Kubernetes Secret volume swaps a symlink; writing in place is the harder case (two writes).
      const changed = nextChange(tls);
      await writeFile(paths.certFile, second.certPem);
      await writeFile(paths.keyFile, second.keyPem);
      await changed;
      expect(fingerprint(tls.serverOptions().cert)).toBe(fingerprint(second.certPem));

      expect(await get(keepAlive)).toEqual({ fingerprint: fingerprint(first.certPem), body: 'ok' });
      expect(await get(fresh())).toEqual({ fingerprint: fingerprint(second.certPem), body: 'ok' });
    } finally {
      keepAlive.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('follows a symlinked file being pointed elsewhere (how Secret volumes update)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-tls-'));
    for (const [name, material] of [['v1', first], ['v2', second]] as const) {
      await writeFile(join(dir, `${name}.crt`), material.certPem);
      await writeFile(join(dir, `${name}.key`), material.keyPem);
    }
    await symlink(join(dir, 'v1.crt'), join(dir, 'tls.crt'));
    await symlink(join(dir, 'v1.key'), join(dir, 'tls.key'));
    const tls = await start({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caFile: null });
    const changed = nextChange(tls);
    for (const ext of ['crt', 'key']) {
      await symlink(join(dir, `v2.${ext}`), join(dir, `next.${ext}`));
      await rename(join(dir, `next.${ext}`), join(dir, `tls.${ext}`));
    }
    await changed;
    expect(fingerprint(tls.serverOptions().cert)).toBe(fingerprint(second.certPem));
  });

  it('keeps serving the previous certificate when the new files do not go together', async () => {
    const paths = await files(first);
    let refused = (): void => undefined;
    const refusal = new Promise<void>((resolve) => (refused = resolve));
    const warnings = pino({ level: 'warn' }, {
      write: (line: string) => {
        if (line.includes('cannot be used')) {
          refused();
        }
      },
    });
    const tls = await start(paths, warnings);
    await writeFile(paths.keyFile, second.keyPem);
    const fixed = nextChange(tls);
    // The watcher saw the new key without its certificate and refused the pair: nothing changed...
    await refusal;
    expect(fingerprint(tls.serverOptions().cert)).toBe(fingerprint(first.certPem));
    expect(tls.serverOptions().key).toBe(first.keyPem);
    // ...then the pair is complete and taken.
    await writeFile(paths.certFile, second.certPem);
    await fixed;
    expect(tls.serverOptions()).toEqual({ cert: second.certPem, key: second.keyPem });
  });

  it.each([
    ['a key that is not the certificate\'s', async (c: CertifiedKey) => ({ ...c, keyPem: second.keyPem }), /TLS_KEY_FILE .* is not the private key of the certificate in TLS_CERT_FILE/],
    ['no certificate at all', async (c: CertifiedKey) => ({ ...c, certPem: 'hello' }), /holds no PEM certificate/],
    ['an expired certificate', async () => {
      const old = await issueServerCertificate(ca, ['scaler.example.com'], 1, new Date(Date.now() - 10 * 24 * 3600_000));
      return old;
    }, /is valid only from .* to /],
    ['a chain from another CA than TLS_CA_FILE', async () => issueServerCertificate(await generateCertificateAuthority('someone else'), ['scaler.example.com'], 30), /does not lead to a certificate in TLS_CA_FILE/],
  ])('refuses %s, naming the file', async (_name, make, message) => {
    const paths = await files(await make(first));
    await expect(readTlsFiles(paths)).rejects.toThrow(message);
  });

  describe('what an agent pins', () => {
    it('with TLS_CA_FILE and a certificate naming the agent URL\'s host: that CA, and the name checked', async () => {
      const tls = await start(await files(first));
      expect(tls.agentPin('https://scaler.example.com:4000')).toEqual({ caCertificates: ca.certPem, verifyHostname: true });
      expect(tls.agentPin('https://10.0.0.5:4000')).toEqual({ caCertificates: ca.certPem, verifyHostname: true });
    });

    it('when the certificate does not name the host, or no CA is given: the public key served now, nothing else', async () => {
      const pinned = publicKeySha256(new X509Certificate(first.certPem));
      const withCa = await start(await files(first));
      expect(withCa.agentPin('https://198.18.0.1:4000')).toEqual({ publicKeySha256: [pinned] });
      withCa.close();
      await rm(dir, { recursive: true, force: true });
      const withoutCa = await start(await files(first, null));
      expect(withoutCa.agentPin('https://scaler.example.com:4000')).toEqual({ publicKeySha256: [pinned] });
      expect(withoutCa.caCertificates()).toBeNull();
    });
  });
});

describe('ServiceTls from the service CA', () => {
  it('pins the CA alone (hosts reach the service by addresses the certificate may not name) and renews before expiry', async () => {
    const ca = await generateCertificateAuthority('ccos-scaler agent channel CA');
    let now = new Date('2027-01-01T00:00:00Z');
    const tls = await ServiceTls.generated(ca, ['localhost', '127.0.0.1', 'scaler-0'], logger, { validDays: 90, renewWithinDays: 30, now: () => now });
    try {
      expect(tls.agentPin('https://198.18.0.1:4000')).toEqual({ caCertificates: ca.certPem });
      const issued = new X509Certificate(tls.serverOptions().cert);
      expect(issued.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
      expect(issued.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, DNS:scaler-0');
      expect(issued.validTo).toBe('Apr  1 00:00:00 2027 GMT');

      now = new Date('2027-02-15T00:00:00Z');
      expect(await tls.renewIfDue()).toBe(false);
      now = new Date('2027-03-10T00:00:00Z');
      const changed = nextChange(tls);
      expect(await tls.renewIfDue()).toBe(true);
      await changed;
      expect(new X509Certificate(tls.serverOptions().cert).validTo).toBe('Jun  8 00:00:00 2027 GMT');
      expect(tls.agentPin('https://198.18.0.1:4000')).toEqual({ caCertificates: ca.certPem });
    } finally {
      tls.close();
    }
  });
});

describe('the service CA in the database', () => {
  it('is one CA for every replica on one Postgres, its key sealed, even when they start together', async () => {
    const database = await createTestDatabase();
    // Migrations first (one process applies them); then three replicas start on the same database.
    await (await openDatabase({ url: database.url, maxConnections: 1 })).destroy();
    const replicas = await Promise.all([0, 1, 2].map(() => openDatabase({ url: database.url, maxConnections: 2 })));
    try {
      const secrets = new SecretBox('s'.repeat(40));
      const cas = await Promise.all(replicas.map((dataSource) => loadOrCreateServiceCa(new ServiceCaStore(dataSource), secrets)));
      expect(new Set(cas.map((ca) => ca.certPem)).size).toBe(1);
      expect(new Set(cas.map((ca) => ca.keyPem)).size).toBe(1);
      const rows = await replicas[0]?.query('SELECT purpose, certificate_pem, private_key_sealed FROM service_certificate_authorities');
      expect(rows).toHaveLength(1);
      expect(rows[0].private_key_sealed).not.toContain('PRIVATE KEY');
      // A later start reads it back instead of making another.
      expect((await loadOrCreateServiceCa(new ServiceCaStore(replicas[1] as never), secrets)).certPem).toBe(cas[0]?.certPem);
      // Without the shared SECRET_KEY the key cannot be opened.
      await expect(loadOrCreateServiceCa(new ServiceCaStore(replicas[2] as never), new SecretBox('x'.repeat(40)))).rejects.toThrow(/sealed with key/);
    } finally {
      await Promise.all(replicas.map((dataSource) => dataSource.destroy()));
      await database.drop();
    }
  });
});
