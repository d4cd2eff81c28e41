import express, { type NextFunction, type Request, type Response } from 'express';
import { getOperationAST, parse, print } from 'graphql';
import type { Logger } from 'pino';
import { AGENT_TOKEN_PREFIX } from '@ccos/api/data-access-db';
import { QUERY_LIMITS, bearerToken } from '@ccos/api/util-graphql';
import { AGENT_OPERATION_TEXTS } from '@ccos/shared/api-schema';
import { type CodedText, message } from '@ccos/shared/messages';
import { type HttpServer, type ServerCertificate, errorHandler, jsonBody, plainAndTlsServers } from './http-server';
import { type OnePortListener, listenOnOnePort } from './tls/one-port-listener';

export interface AgentListenerOptions {
  readonly port: number;
  readonly host: string;
  /** The main port's certificate: agents pin it, whichever port they reach. */
  readonly certificate: ServerCertificate;
  /** Largest GraphQL body: agents have no session, so the main port's MAX_ANONYMOUS_REQUEST_BYTES (a report is at most about 60 KB). */
  readonly maxRequestBytes: number;
  readonly logger: Logger;
  /** The main server's handling of a request (HttpServer.handle): it serves what this listener admits. */
  readonly handle: HttpServer['handle'];
}

export interface AgentListener {
  readonly port: number;
  /** The listener over TLS, as agents reach it. */
  readonly httpsUrl: string;
  close(): Promise<void>;
}

/**
 * The agents' listener (AGENT_PORT): HTTPS (and plain HTTP, for AGENT_PLAIN_HTTP=allow) on a port
 * of its own that answers only what an install agent sends —
 *
 * - `POST /graphql` with one of the agent's documents (`AGENT_OPERATION_TEXTS`, the operations of
 *   agent.graphql); any other operation, introspection included, is 404;
 * - `GET|HEAD /artifacts/manifest` and `/artifacts/<kind>/<name>`, its downloads;
 * - `POST /agent/diagnostics`, a failed run's bundle;
 * - `GET /healthz`, its reachability check;
 *
 * and 404 to everything else (the console, `/metrics`, the artifact upload, GraphiQL, WebSockets).
 * A bearer token that is not an agent token is refused: people sign in on the main port. What it
 * admits is handed to the main server's own handling, so agents meet one edge on either port.
 * This is the port a passthrough Route or a load balancer publishes to the hosts' networks.
 */
export async function startAgentListener(options: AgentListenerOptions): Promise<AgentListener> {
  const app = express();
  app.disable('x-powered-by');
  // Paths are matched exactly: a variant the main server would still route (/HEALTHZ, /healthz/) is not an agent's.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  const delegate = options.handle;
  const refuse = notFound(options.logger);

  app.use(agentTokensOnly);
  app.get('/healthz', delegate);
  app.get('/artifacts/manifest', delegate);
  app.get('/artifacts/:kind/:name', delegate);
  app.post('/agent/diagnostics', delegate);
  app.post('/graphql', jsonBody(options.maxRequestBytes), agentOperationsOnly(options.logger), delegate);
  app.use(refuse);
  app.use(errorHandler(options.logger));

  const { httpServer, tlsServer, stopCertificateUpdates } = plainAndTlsServers(app, options.certificate);
  let listener: OnePortListener;
  try {
    listener = await listenOnOnePort({ port: options.port, host: options.host, tls: tlsServer, plain: httpServer });
  } catch (error) {
    stopCertificateUpdates();
    throw error;
  }
  const shownHost = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
  return {
    port: listener.port,
    httpsUrl: `https://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${listener.port}`,
    async close() {
      stopCertificateUpdates();
      // Requests under way finish; idle keep-alive connections end at the servers' keep-alive timeout (5 s), the rest at 10 s.
      await listener.close(10_000);
    },
  };
}

/** The agent documents, normalised (parsed and printed), with the name each one's operation has. */
const AGENT_DOCUMENTS: ReadonlyMap<string, string> = new Map(
  AGENT_OPERATION_TEXTS.map((text) => {
    const document = parse(text);
    return [print(document), getOperationAST(document)?.name?.value ?? ''];
  }),
);

/** A refusal in GraphQL's error shape (the edge's other refusals have it too), coded for every client's language. */
function refusal(text: CodedText, code = 'NOT_FOUND'): { errors: Array<{ message: string; extensions: Record<string, unknown> }> } {
  return { errors: [{ message: text.message, extensions: { code, messageCode: text.code, messageParams: text.params } }] };
}

/**
 * `POST /graphql` passes only with one of the agent's documents (spacing aside) and, when it names
 * an operation, that document's. The parser stops at the edge's token limit, so an oversized
 * document costs no more here than on the main port.
 */
function agentOperationsOnly(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const body: unknown = req.body;
    const query = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)['query'] : undefined;
    const operationName = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['operationName'] : undefined;
    let name: string | undefined;
    if (typeof query === 'string') {
      try {
        name = AGENT_DOCUMENTS.get(print(parse(query, { maxTokens: QUERY_LIMITS.maxTokens, noLocation: true })));
      } catch {
        name = undefined;
      }
    }
    if (name === undefined || (operationName !== undefined && operationName !== null && operationName !== name)) {
      logger.debug({ path: req.path, remote: req.socket.remoteAddress }, 'agents listener: refused a GraphQL operation that is not the agent\'s');
      const served = [...AGENT_DOCUMENTS.values()].join(', ');
      res.status(404).json(refusal(message('agentListener.operationNotServed', { operations: served })));
      return;
    }
    next();
  };
}

/** A session (or any bearer that is not an agent token) has nothing to do here. */
function agentTokensOnly(req: Request, res: Response, next: NextFunction): void {
  const token = bearerToken(req.headers.authorization);
  if (req.headers.authorization === undefined || token?.startsWith(`${AGENT_TOKEN_PREFIX}_`)) {
    next();
    return;
  }
  res.status(401).setHeader('www-authenticate', 'Bearer').json(refusal(message('agentListener.agentTokensOnly'), 'UNAUTHENTICATED'));
}

function notFound(logger: Logger) {
  return (req: Request, res: Response) => {
    logger.debug({ method: req.method, path: req.path, remote: req.socket.remoteAddress }, 'agents listener: not an agent request');
    res.status(404).json(refusal(message('agentListener.notFound')));
  };
}
