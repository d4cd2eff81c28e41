import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { CertifiedKey } from './pki';

/**
 * The machine config server stand-in: HTTPS (own CA) serving
 * `/config/worker` as Ignition JSON when the Accept header asks for Ignition
 * spec 3 (`application/vnd.coreos.ignition+json;version=3.2.0`), 406
 * otherwise, 404 for other pools; `/healthz` answers 204. In `html` mode it
 * answers every config request with an HTML error page, as a misrouted load
 * balancer does.
 *
 * @see https://github.com/openshift/machine-config-operator/blob/master/docs/MachineConfigServer.md
 */
export type MachineConfigServerMode =
  | { readonly mode: 'ok' }
  | { readonly mode: 'html'; readonly status?: number };

export interface MachineConfigServerOptions {
  readonly host: string;
  readonly port: number;
  readonly tls: CertifiedKey;
  /** The worker config, serialised on each request. */
  readonly workerConfig: () => unknown;
  /** Read on each request, so a fault switch takes effect at once. */
  readonly mode: () => MachineConfigServerMode;
}

const IGNITION_MEDIA_TYPE = 'application/vnd.coreos.ignition+json';

/** Which Ignition spec an Accept header asks for, or null when it asks for none. */
export function requestedIgnitionVersion(accept: string | undefined): string | null {
  for (const part of (accept ?? '').split(',')) {
    const [type, ...params] = part.trim().split(';').map((piece) => piece.trim());
    if (type?.toLowerCase() !== IGNITION_MEDIA_TYPE) {
      continue;
    }
    const version = params.find((param) => param.startsWith('version='))?.slice('version='.length);
    return version ?? '3.2.0';
  }
  return null;
}

/** Starts the server; resolves once it listens. */
export async function startMachineConfigServer(options: MachineConfigServerOptions): Promise<Server> {
  const server = createServer({ cert: options.tls.certPem, key: options.tls.keyPem }, (req, res) => handle(options, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

function handle(options: MachineConfigServerOptions, req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', 'https://mcs').pathname;
  if (path === '/healthz') {
    res.writeHead(204).end();
    return;
  }
  const pool = /^\/config\/([a-z0-9-]+)$/.exec(path)?.[1];
  if (pool === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
    return;
  }
  const mode = options.mode();
  if (mode.mode === 'html') {
    res.writeHead(mode.status ?? 200, { 'Content-Type': 'text/html' }).end(HTML_ERROR_PAGE);
    return;
  }
  if (pool !== 'worker') {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`machine config pool ${pool} not found\n`);
    return;
  }
  const version = requestedIgnitionVersion(req.headers.accept);
  if (version === null || !version.startsWith('3.')) {
    res.writeHead(406, { 'Content-Type': 'text/plain' }).end(
      `the lab machine config server serves Ignition spec 3 only; send "Accept: ${IGNITION_MEDIA_TYPE};version=3.2.0"\n`,
    );
    return;
  }
  const body = Buffer.from(JSON.stringify(options.workerConfig()));
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(body.length) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

const HTML_ERROR_PAGE = [
  '<!DOCTYPE html>',
  '<html><head><title>503 Service Unavailable</title></head>',
  '<body><center><h1>503 Service Unavailable</h1></center>',
  '<hr><center>No server is available to handle this request.</center>',
  '</body></html>',
  '',
].join('\n');
