import { HttpError, type Http, type HttpRequest, type HttpResponse } from '../lib/http';

/** What a fake server answers. */
export interface FakeHttpReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** Split the body into chunks of this size (default: one chunk). */
  readonly chunkSize?: number;
  /** Break the connection (this code) after sending this many body bytes. */
  readonly breakAfterBytes?: number;
  readonly breakCode?: string;
}

type Handler = (request: HttpRequest) => FakeHttpReply | Promise<FakeHttpReply>;

/**
 * A scripted HTTP server: a handler gets each request and returns a reply
 * or throws an {@link HttpError} (connection refused, TLS failure...).
 */
export class FakeHttp implements Http {
  readonly requests: HttpRequest[] = [];

  constructor(private handler: Handler) {}

  setHandler(handler: Handler): void {
    this.handler = handler;
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    this.requests.push(request);
    if (request.signal?.aborted) {
      throw new HttpError('request aborted', 'ABORTED');
    }
    const reply = await this.handler(request);
    const bytes = Buffer.from(reply.body ?? '');
    const limit = reply.breakAfterBytes ?? bytes.length;
    const chunkSize = reply.chunkSize ?? Math.max(1, bytes.length);
    let discarded = false;
    async function* body(): AsyncGenerator<Uint8Array> {
      for (let offset = 0; offset < Math.min(limit, bytes.length); offset += chunkSize) {
        if (discarded) {
          return;
        }
        yield bytes.subarray(offset, Math.min(offset + chunkSize, limit));
      }
      if (reply.breakAfterBytes !== undefined && reply.breakAfterBytes < bytes.length) {
        throw new HttpError('connection reset by peer', reply.breakCode ?? 'ECONNRESET');
      }
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(reply.headers ?? {})) {
      headers[name.toLowerCase()] = value;
    }
    return {
      status: reply.status,
      headers,
      body: body(),
      discard: () => {
        discarded = true;
      },
    };
  }
}

/** Header lookup on a recorded request, case-insensitive. */
export function requestHeader(request: HttpRequest, name: string): string | undefined {
  const entry = Object.entries(request.headers ?? {}).find(([key]) => key.toLowerCase() === name.toLowerCase());
  return entry?.[1];
}
