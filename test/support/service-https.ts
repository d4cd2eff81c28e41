import { request } from 'node:https';

export interface HttpsAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  json<T = unknown>(): T;
}

/**
 * A request to the service over TLS that trusts only `ca` and, like the agent with the
 * service's own CA, does not check the name (hosts reach the service by any address).
 */
export function overHttps(url: string, options: { readonly ca: string; readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string | Buffer }): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, ca: options.ca, agent: false, checkServerIdentity: () => undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: <T>() => JSON.parse(body.toString('utf8')) as T });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
