import { request as httpRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { isIP } from 'node:net';
import { checkServerIdentity } from 'node:tls';
import type { KubeConnection } from './kubeconfig';

/**
 * A small Kubernetes REST client over node:https: enough for the lab and the
 * stand-in kubelet (bundled into one file, where @kubernetes/client-node
 * would be heavy). Authenticates with a bearer token or a client
 * certificate, verifies the server against the kubeconfig's CA.
 */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** A response body as JSON. */
export type Json = Record<string, unknown>;

/** A client bound to one connection. */
export class KubeClient {
  private readonly agent: Agent | undefined;
  private readonly url: URL;

  constructor(
    private readonly connection: KubeConnection,
    private readonly userAgent = 'ccos-lab',
    private readonly timeoutMs = 15_000,
  ) {
    this.url = new URL(connection.server);
    this.agent = this.url.protocol === 'https:'
      ? new Agent({
        keepAlive: true,
        ca: connection.caPem,
        cert: connection.clientCertPem,
        key: connection.clientKeyPem,
        rejectUnauthorized: !connection.insecureSkipTlsVerify,
        // tls-server-name: verify the certificate against that name (SNI only for DNS names).
        ...(connection.tlsServerName === undefined ? {} : {
          servername: isIP(connection.tlsServerName) ? undefined : connection.tlsServerName,
          checkServerIdentity: (_host: string, cert: Parameters<typeof checkServerIdentity>[1]) =>
            checkServerIdentity(connection.tlsServerName ?? _host, cert),
        }),
      })
      : undefined;
  }

  /** The server URL. */
  get server(): string {
    return this.connection.server;
  }

  get<T = Json>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }

  post<T = Json>(path: string, body: unknown): Promise<T> {
    return this.call<T>('POST', path, body);
  }

  put<T = Json>(path: string, body: unknown): Promise<T> {
    return this.call<T>('PUT', path, body);
  }

  /** PATCH with a JSON merge patch (RFC 7386). */
  mergePatch<T = Json>(path: string, body: unknown): Promise<T> {
    return this.call<T>('PATCH', path, body, 'application/merge-patch+json');
  }

  /** PATCH with a strategic merge patch, as kubelet and kubectl send. */
  strategicPatch<T = Json>(path: string, body: unknown): Promise<T> {
    return this.call<T>('PATCH', path, body, 'application/strategic-merge-patch+json');
  }

  delete<T = Json>(path: string): Promise<T> {
    return this.call<T>('DELETE', path);
  }

  /** Closes idle keep-alive sockets. */
  close(): void {
    this.agent?.destroy();
  }

  private call<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': this.userAgent };
    if (payload !== undefined) {
      headers['Content-Type'] = contentType;
      headers['Content-Length'] = String(payload.length);
    }
    if (this.connection.token !== undefined) {
      headers['Authorization'] = `Bearer ${this.connection.token}`;
    }
    const target = new URL(path, this.url);
    return new Promise<T>((resolve, reject) => {
      const send = this.url.protocol === 'https:' ? request : httpRequest;
      const req = send(target, { method, headers, agent: this.agent, timeout: this.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown = text;
          try {
            parsed = text === '' ? {} : JSON.parse(text);
          } catch {
            // Not JSON: keep the text for the error.
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            resolve(parsed as T);
            return;
          }
          const statusBody = typeof parsed === 'object' && parsed !== null ? (parsed as Json) : {};
          const reason = typeof statusBody['reason'] === 'string' ? statusBody['reason'] : String(status);
          const message = typeof statusBody['message'] === 'string' ? statusBody['message'] : text.slice(0, 200);
          reject(new KubeApiError(status, reason, `${method} ${path}: ${status} ${message}`));
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${target.href}: timed out after ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }
}
