import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type Readiness, probeAnswer } from './http-server';

export interface InternalListener {
  readonly port: number;
  /** Plain HTTP, as Prometheus scrapes it and the kubelet probes it. */
  readonly url: string;
  close(): Promise<void>;
}

export interface InternalListenerOptions {
  readonly port: number;
  readonly host: string;
  readonly logger: Logger;
  /** `GET /metrics`; null: none here. */
  readonly registry: Registry | null;
  /** `GET /healthz` and `GET /readyz`, answered as on the main port; null: none here. */
  readonly readiness: (() => Promise<Readiness>) | null;
}

/**
 * Plain HTTP for machines, and nothing else (404): the metrics on a port of their own
 * (METRICS_PORT), and a worker process's probes and metrics on PORT (SERVICE_ROLE=worker).
 * The metrics are read without a sign-in, so they are kept off every port anyone else reaches: the
 * deployment publishes no route or load balancer to this one, and its NetworkPolicy admits only the
 * monitoring namespace (and, for probes, the kubelet) to it.
 */
export async function startInternalListener(options: InternalListenerOptions): Promise<InternalListener> {
  const { registry, readiness, logger } = options;
  const answer = (req: { method?: string }, res: ServerResponse, status: number, contentType: string, body: string) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(404).end();
      return;
    }
    if (path === '/metrics' && registry) {
      registry.metrics().then(
        (text) => answer(req, res, 200, registry.contentType, text),
        (error: unknown) => {
          logger.error({ err: error }, 'metrics could not be collected');
          res.writeHead(500).end();
        },
      );
    } else if ((path === '/healthz' || path === '/readyz') && readiness) {
      probeAnswer(path, readiness).then(
        ({ code, body }) => answer(req, res, code, 'application/json; charset=utf-8', JSON.stringify(body)),
        (error: unknown) => {
          logger.error({ err: error }, 'readiness could not be read');
          res.writeHead(500).end();
        },
      );
    } else {
      res.writeHead(404).end();
    }
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
