import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { type ClusterAddressGuard, hostOf } from '@ccos/api/data-access-kube';

/** What one attempt came to: delivered (a 2xx answer), or why not. */
export interface SendOutcome {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Posts one delivery; never throws (a refused address, a timeout and a non-2xx answer are outcomes). */
export type WebhookSend = (request: WebhookRequest) => Promise<SendOutcome>;

/**
 * Posts over HTTP(S) to addresses the cluster address policy allows, checked on every connection
 * (a literal address before it, a name as it resolves), within `timeoutMs`. The answer's body is
 * not read beyond its first bytes.
 */
export function httpWebhookSender(guard: ClusterAddressGuard, timeoutMs = 10_000): WebhookSend {
  return (delivery) =>
    new Promise((resolve) => {
      const started = performance.now();
      const done = (outcome: Omit<SendOutcome, 'durationMs'>) => resolve({ ...outcome, durationMs: Math.round(performance.now() - started) });
      let url: URL;
      try {
        url = new URL(delivery.url);
      } catch {
        done({ ok: false, statusCode: null, error: 'not a URL' });
        return;
      }
      const host = hostOf(delivery.url);
      if (isIP(host)) {
        const verdict = guard.check(host, 'webhook');
        if (!verdict.ok) {
          done({ ok: false, statusCode: null, error: verdict.reason });
          return;
        }
      }
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = send(url, {
        method: 'POST',
        headers: { ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)) },
        lookup: guard.lookup(),
        timeout: timeoutMs,
      });
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      outgoing.on('error', (error) => done({ ok: false, statusCode: null, error: error.message }));
      outgoing.on('response', (response) => {
        const status = response.statusCode ?? 0;
        response.resume();
        response.on('end', () => done({ ok: status >= 200 && status < 300, statusCode: status, error: status >= 200 && status < 300 ? null : `answered ${status}` }));
        response.on('error', (error) => done({ ok: false, statusCode: status, error: error.message }));
      });
      outgoing.end(delivery.body);
    });
}
