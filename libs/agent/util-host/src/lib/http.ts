import { type ClientRequestArgs, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
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

/** {@link Http} over node:http and node:https, one connection per request (no stale keep-alive after a cut link). */
export class NodeHttp implements Http {
  constructor(private readonly userAgent: string) {}

  request(req: HttpRequest): Promise<HttpResponse> {
    const url = new URL(req.url);
    const secure = url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    const idleMs = req.idleTimeoutMs ?? 15_000;
    const pin = secure ? req.pin : undefined;
    return new Promise((resolve, reject) => {
      let settled = false;
      // The pinned connection while it is being checked (the request does not own it yet).
      let pending: Socket | null = null;
      // Why we tore the connection down ourselves; the body stream then only says "aborted".
      let cause: HttpError | null = null;
      const body = req.body === undefined ? undefined : Buffer.from(req.body);
      const client = send(url, {
        method: req.method,
        // No agent with a pin: Node then asks createConnection for the socket and waits for it.
        ...(pin === undefined
          ? { agent: false }
          : {
              createConnection: (_options: ClientRequestArgs, connected: (error: Error | null, socket: Duplex) => void) => {
                const target = { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443), idleTimeoutMs: idleMs };
                pending = connectPinned(target, pin, (error, socket) => {
                  pending = null;
                  connected(error, socket);
                });
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
        pending?.destroy();
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
          reject(toHttpError(error, 'EREQUEST'));
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
