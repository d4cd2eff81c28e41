import { createHash } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer as createHttpServer, request as httpRequest } from 'node:http';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { TLSSocket } from 'node:tls';

/** Where a proxy listens (on the hosts' path, e.g. the lab bridge address) and where the real service is. */
export interface ProxyEnds {
  readonly listen: { readonly host: string; readonly port: number };
  readonly target: { readonly host: string; readonly port: number };
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function listen(server: Server | ReturnType<typeof createHttpServer>, at: ProxyEnds['listen']): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** How the plain-HTTP attacker treats one client (by its address). */
export interface Tampering {
  /** The artifact whose bytes it changes, e.g. `binary/kubelet`. */
  readonly artifact: string;
  /** Also rewrite that artifact's sha256 in the manifest to match the changed bytes. */
  readonly rewriteManifest: boolean;
}

export interface TamperingProxy {
  /** What it did, per client address: paths it forwarded, artifacts it altered, manifests it rewrote. */
  readonly seen: Map<string, { paths: string[]; altered: number; manifestsRewritten: number }>;
  close(): Promise<void>;
}

/**
 * A man in the middle on plain HTTP: forwards every request to the service and hands
 * back the answer, except that it flips one byte of one artifact, and (when told) puts
 * the altered file's sha256 into the manifest, which is what an attacker who can replace
 * kubelet would do. `genuine` is the artifact's real content (to compute the forgery's
 * checksum the way an attacker who fetched it once would).
 */
export async function startTamperingProxy(ends: ProxyEnds, genuine: Buffer, policy: (client: string) => Tampering | null): Promise<TamperingProxy> {
  const seen: TamperingProxy['seen'] = new Map();
  const offset = Math.floor(genuine.length / 2);
  const forged = Buffer.from(genuine);
  forged[offset] = (forged[offset] ?? 0) ^ 0xff;
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    const client = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const record = seen.get(client) ?? { paths: [], altered: 0, manifestsRewritten: 0 };
    seen.set(client, record);
    record.paths.push(req.url ?? '');
    const tampering = policy(client);
    const upstream = httpRequest({ host: ends.target.host, port: ends.target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        let body: Buffer = Buffer.concat(chunks);
        const path = (req.url ?? '').split('?')[0] ?? '';
        if (tampering && path === `/artifacts/${tampering.artifact}` && (answer.statusCode === 200 || answer.statusCode === 206)) {
          const start = answer.statusCode === 206 ? Number(/^bytes (\d+)-/.exec(String(answer.headers['content-range']))?.[1] ?? 0) : 0;
          if (offset >= start && offset < start + body.length) {
            body = Buffer.from(body);
            body[offset - start] = (body[offset - start] ?? 0) ^ 0xff;
            record.altered += 1;
          }
        }
        if (tampering?.rewriteManifest && path === '/artifacts/manifest' && answer.statusCode === 200) {
          const manifest = JSON.parse(body.toString('utf8')) as { artifacts: Array<{ kind: string; name: string; sha256: string }> };
          for (const artifact of manifest.artifacts) {
            if (`${artifact.kind}/${artifact.name}` === tampering.artifact) {
              artifact.sha256 = sha256(forged);
            }
          }
          body = Buffer.from(JSON.stringify(manifest), 'utf8');
          record.manifestsRewritten += 1;
        }
        const headers = { ...answer.headers, 'content-length': String(body.length) };
        res.writeHead(answer.statusCode ?? 502, headers);
        res.end(body);
      });
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await listen(server, ends.listen);
  return {
    seen,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export interface TlsImpostor {
  /** `impersonate`: terminate TLS with our own certificate; `relay`: pass bytes through untouched (the attacker gone). */
  mode: 'impersonate' | 'relay';
  /** Connections it answered with its own certificate. */
  readonly impersonated: number;
  /** Decrypted bytes clients sent after a handshake with our certificate (a token would be among them). */
  readonly plaintext: () => Buffer;
  close(): Promise<void>;
}

/**
 * A man in the middle for HTTPS: it presents its own certificate (as convincing as it
 * can make one: the service's name and the gateway address, from a CA named like the
 * service's), reads what the client sends, and would pass it on to the service over TLS.
 * In `relay` mode it is a plain TCP relay, as a router on the path is.
 */
export async function startTlsImpostor(ends: ProxyEnds, certificate: { readonly certPem: string; readonly keyPem: string }): Promise<TlsImpostor> {
  const sockets = new Set<Socket>();
  const received: Buffer[] = [];
  let impersonated = 0;
  const state: TlsImpostor = {
    mode: 'impersonate',
    get impersonated() {
      return impersonated;
    },
    plaintext: () => Buffer.concat(received),
    close: () => new Promise((resolve) => {
      for (const socket of sockets) {
        socket.destroy();
      }
      server.close(() => resolve());
    }),
  };
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (state.mode === 'relay') {
      const upstream = connect(ends.target.port, ends.target.host);
      sockets.add(upstream);
      upstream.on('close', () => {
        sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      return;
    }
    impersonated += 1;
    const secure = new TLSSocket(client, { isServer: true, cert: certificate.certPem, key: certificate.keyPem });
    secure.on('data', (chunk: Buffer) => received.push(chunk));
    secure.on('error', () => secure.destroy());
  });
  await listen(server, ends.listen);
  return state;
}
