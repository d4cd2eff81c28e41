import { type ClientRequestArgs, Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { HttpError } from './http-error';
import { CERT_NOT_PINNED, type TlsPin, connectPinned } from './tls-pin';

export { HttpError } from './http-error';

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'HEAD';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** PEM CA bundle to verify an https server with (and its name); the system CAs when absent. */
  readonly ca?: string;
  /**
   * Recognise the https server by this pin instead (see {@link TlsPin}); `ca` is then
   * ignored. The request is written only after the pin held.
   */
  readonly pin?: TlsPin;
  /** Give up when no response headers arrived within this long (default 30 s). */
  readonly timeoutMs?: number;
  /** Give up when the connection stays silent this long, while connecting or reading the body (default 15 s). */
  readonly idleTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface HttpResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, read once; iteration throws an {@link HttpError} when the connection breaks. */
  readonly body: AsyncIterable<Uint8Array>;
  /** Stops reading the body and releases the connection. */
  discard(): void;
}

/** HTTP(S) as the agent needs it: streaming bodies, a CA per request, timeouts for cut links. */
export interface Http {
  request(request: HttpRequest): Promise<HttpResponse>;
}

/** TLS verification failures: retrying does not help, the CA or the certificate is wrong. */
const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED', 'CERT_REJECTED',
  'ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO', CERT_NOT_PINNED,
]);

/** Whether an error code is a TLS verification or handshake failure. */
export function isTlsErrorCode(code: string): boolean {
  return TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_');
}

/** Reads a whole body, refusing more than `limit` bytes. */
export async function readBody(response: HttpResponse, limit = 16 * 1024 * 1024): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > limit) {
      response.discard();
      throw new HttpError(`response body is larger than ${limit} bytes`, 'EBODYTOOLARGE');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function toHttpError(error: unknown, fallback: string): HttpError {
  if (error instanceof HttpError) {
    return error;
  }
  const err = error as NodeJS.ErrnoException;
  const code = err?.code ?? (err?.name === 'AbortError' ? 'ABORTED' : fallback);
  return new HttpError(err?.message ?? String(error), code, { cause: error });
}

/**
 * How long a kept connection may sit idle before it is closed: below the service's keep-alive
 * timeout (Node's 5 s default), so a request never goes out on a connection the server is
 * closing; and short, so a link cut meanwhile costs at most this long of a stale connection.
 */
export const KEEP_ALIVE_IDLE_MS = 4_000;

/** Errors of a kept connection the server closed just as a request went out: worth one retry on a fresh one. */
const STALE_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Keeps verified pinned connections for the next request. The pin check runs once per
 * connection, in {@link connectPinned}, before the agent gets the socket; a kept socket was
 * checked when it was opened and has carried nothing but this service's answers since.
 */
class PinnedAgent extends HttpsAgent {
  constructor(
    private readonly pin: TlsPin,
    private readonly idleMs: number,
  ) {
    super({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS, scheduling: 'lifo' });
  }

  override createConnection(options: ClientRequestArgs, connected?: (error: Error | null, socket: Duplex) => void): undefined {
    const target = { host: String(options.host ?? '').replace(/^\[|\]$/g, ''), port: Number(options.port ?? 443), idleTimeoutMs: this.idleMs };
    connectPinned(target, this.pin, (error, socket) => connected?.(error, socket));
    return undefined;
  }
}

/**
 * {@link Http} over node:http and node:https. Connections are kept between requests (a
 * step's dozens of downloads and events then cost one TLS handshake, not one each) and
 * closed after {@link KEEP_ALIVE_IDLE_MS} idle; a request that meets a kept connection the
 * server just closed is sent once more on a fresh one. HTTPS without a pin (system or given
 * CAs) opens a connection per request.
 */
export class NodeHttp implements Http {
  private readonly plainAgent = new HttpAgent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS, scheduling: 'lifo' });
  private readonly pinnedAgents = new Map<string, PinnedAgent>();

  constructor(private readonly userAgent: string) {}

  async request(req: HttpRequest): Promise<HttpResponse> {
    try {
      return await this.send(req);
    } catch (error) {
      if (error instanceof StaleConnectionError) {
        return this.send(req, { fresh: true });
      }
      throw error;
    }
  }

  private agentFor(secure: boolean, pin: TlsPin | undefined, idleMs: number): HttpAgent | false {
    if (!secure) {
      return this.plainAgent;
    }
    if (pin === undefined) {
      return false;
    }
    const key = `${idleMs} ${JSON.stringify(pin)}`;
    let agent = this.pinnedAgents.get(key);
    if (agent === undefined) {
      agent = new PinnedAgent(pin, idleMs);
      this.pinnedAgents.set(key, agent);
    }
    return agent;
  }

  private send(req: HttpRequest, { fresh = false } = {}): Promise<HttpResponse> {
    const url = new URL(req.url);
    const secure = url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    const idleMs = req.idleTimeoutMs ?? 15_000;
    const pin = secure ? req.pin : undefined;
    return new Promise((resolve, reject) => {
      let settled = false;
      // Why we tore the connection down ourselves; the body stream then only says "aborted".
      let cause: HttpError | null = null;
      const body = req.body === undefined ? undefined : Buffer.from(req.body);
      const client = send(url, {
        method: req.method,
        // A retry after a stale kept connection goes out on a fresh one, pinned like any other
        // (no agent with a pin: Node then asks createConnection for the socket and waits for it).
        ...(!fresh
          ? { agent: this.agentFor(secure, pin, idleMs) }
          : pin === undefined
            ? { agent: false }
            : {
                createConnection: (_options: ClientRequestArgs, connected: (error: Error | null, socket: Duplex) => void) => {
                  connectPinned({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443), idleTimeoutMs: idleMs }, pin, connected);
                  return undefined;
                },
              }),
        timeout: idleMs,
        headers: {
          'user-agent': this.userAgent,
          ...(body === undefined ? {} : { 'content-length': String(body.length) }),
          ...req.headers,
        },
        ...(secure && pin === undefined && req.ca !== undefined ? { ca: req.ca } : {}),
      });
      const fail = (error: HttpError) => {
        cause ??= error;
        client.destroy(error);
        if (!settled) {
          settled = true;
          clearTimeout(headerTimer);
          reject(error);
        }
      };
      const headerTimer = setTimeout(
        () => fail(new HttpError(`no response from ${url.host} within ${Math.round((req.timeoutMs ?? 30_000) / 1000)} s`, 'ETIMEDOUT')),
        req.timeoutMs ?? 30_000,
      );
      client.on('timeout', () => fail(new HttpError(`connection to ${url.host} silent for ${Math.round(idleMs / 1000)} s`, 'ETIMEDOUT')));
      const onAbort = () => fail(new HttpError('request aborted', 'ABORTED'));
      req.signal?.addEventListener('abort', onAbort, { once: true });
      if (req.signal?.aborted) {
        onAbort();
        return;
      }
      client.on('error', (error) => {
        req.signal?.removeEventListener('abort', onAbort);
        if (!settled) {
          settled = true;
          clearTimeout(headerTimer);
          const code = (error as NodeJS.ErrnoException).code ?? '';
          reject(client.reusedSocket && cause === null && STALE_CONNECTION_CODES.has(code) ? new StaleConnectionError(error) : toHttpError(error, 'EREQUEST'));
        }
      });
      client.on('response', (response: IncomingMessage) => {
        settled = true;
        clearTimeout(headerTimer);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) {
            headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
          }
        }
        resolve({
          status: response.statusCode ?? 0,
          headers,
          body: streamBody(response, () => cause, () => req.signal?.removeEventListener('abort', onAbort)),
          discard: () => {
            req.signal?.removeEventListener('abort', onAbort);
            response.destroy();
            client.destroy();
          },
        });
      });
      client.end(body);
    });
  }
}

/** A kept connection the server had closed before the request reached it. */
class StaleConnectionError extends Error {
  constructor(cause: unknown) {
    super('the kept connection was closed by the server', { cause });
  }
}

async function* streamBody(response: IncomingMessage, cause: () => HttpError | null, done: () => void): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of response) {
      yield chunk as Buffer;
    }
    if (!response.complete) {
      throw new HttpError('connection closed before the whole body arrived', 'ECONNRESET');
    }
  } catch (error) {
    throw cause() ?? toHttpError(error, 'ECONNRESET');
  } finally {
    done();
  }
}
