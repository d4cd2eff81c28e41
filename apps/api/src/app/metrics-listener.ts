import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface MetricsListener {
  readonly port: number;
  /** Plain HTTP, as Prometheus scrapes it. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on an internal port of its own (METRICS_PORT), plain HTTP, and nothing else (404).
 * The metrics are read without a sign-in, so they are kept off every port anyone else reaches: the
 * deployment publishes no route or load balancer to this one, and its NetworkPolicy admits only the
 * monitoring namespace to it.
 */
export async function startMetricsListener(options: { readonly port: number; readonly host: string; readonly registry: Registry; readonly logger: Logger }): Promise<MetricsListener> {
  const { registry, logger } = options;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'metrics could not be collected');
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
  return {
    port,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A scrape is short; Prometheus keeps its connection open between scrapes.
      server.closeIdleConnections();
      const forced = setTimeout(() => server.closeAllConnections(), 5_000);
      await closed;
      clearTimeout(forced);
    },
  };
}
