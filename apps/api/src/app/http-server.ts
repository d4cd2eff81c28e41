import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { type IncomingMessage, type Server as PlainServer, type RequestListener, createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { join } from 'node:path';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  type DocumentNode,
  type ExecutionArgs,
  type FormattedExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  getOperationAST,
  parse,
  specifiedRules,
  validate,
} from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import { AGENT_TOKEN_PREFIX } from '@ccos/api/data-access-db';
import {
  type AuthenticatedUser,
  type EventBus,
  QUERY_LIMITS,
  type RequestContext,
  type RequestOrigin,
  bearerToken,
  costRefusal,
  graphQLErrorOf,
  operationCost,
  queryLimitRules,
  rememberRequestSecrets,
  scrubRequestSecrets,
  secretValuesInRequest,
  selectsIntrospection,
  withRequestSecrets,
} from '@ccos/api/util-graphql';
import { message } from '@ccos/shared/messages';
import { scrubSecrets } from '@ccos/shared/util-redaction';
import { compressedAssets } from './compressed-assets';
import { trackLiveSessions } from './live-sessions';
import { type ApiMetrics, methodLabel, operationLabel, routeLabel } from './metrics';
import { type OnePortListener, listenOnOnePort } from './tls/one-port-listener';
import { DEFAULT_WEBSOCKET_LIMITS, type WebSocketLimitName, type WebSocketLimits, WebSocketAdmission } from './websocket-admission';

/** What `/readyz` says: only `ready` answers 200. */
export type Readiness = 'ready' | 'starting' | 'database unreachable';

/** The answer to a probe (`/healthz`: the process serves; `/readyz`: 503 until `readiness` says ready), on the main port and a worker's. */
export async function probeAnswer(path: '/healthz' | '/readyz', readiness: () => Promise<Readiness>): Promise<{ readonly code: number; readonly body: { readonly status: string } }> {
  if (path === '/healthz') {
    return { code: 200, body: { status: 'ok' } };
  }
  const status = await readiness();
  return { code: status === 'ready' ? 200 : 503, body: { status } };
}

/** The certificate to serve, and word when it changes (see ServiceTls). */
export interface ServerCertificate {
  serverOptions(): { readonly cert: string; readonly key: string };
  onChange(listener: () => void): () => void;
}

export interface HttpServerOptions {
  readonly port: number;
  readonly host: string;
  readonly consoleDir: string;
  /** The built GraphQL IDE (apps/graphiql), served at GET /graphql to browsers. */
  readonly graphiqlDir: string;
  readonly maxRequestBytes: number;
  /** Largest request body without a signed-in session (anonymous, or an agent token): MAX_ANONYMOUS_REQUEST_BYTES, which the config keeps at most maxRequestBytes. */
  readonly maxAnonymousRequestBytes?: number;
  readonly schema: GraphQLSchema;
  readonly logger: Logger;
  readonly metrics: ApiMetrics;
  /** Resolves a session bearer token to its user (null when invalid or expired). */
  readonly authenticate: (token: string, options?: { readonly fresh?: boolean }) => Promise<AuthenticatedUser | null>;
  /** Where a request came from (the peer, or the client behind a trusted proxy). */
  readonly origin: (request: IncomingMessage) => RequestOrigin;
  /** A process still starting its features, or cut from its database, takes no traffic. */
  readonly readiness: () => Promise<Readiness>;
  readonly events: EventBus;
  /** Extra routes (e.g. the artifact server) mounted before the console. */
  readonly routes?: (app: express.Express) => void;
  /** Served to clients that open with a TLS handshake; the others get plain HTTP on the same port. */
  readonly certificate: ServerCertificate;
  /** Accept agent tokens on plain HTTP connections too (AGENT_PLAIN_HTTP=allow). */
  readonly agentPlainHttp: boolean;
  /** Answer GET /metrics on this port (default); false when a listener of its own serves it (METRICS_PORT). */
  readonly serveMetrics?: boolean;
  /** graphql-ws connections per session, user and process, and subscriptions per connection (WS_* variables). */
  readonly webSocketLimits?: WebSocketLimits;
}

export interface HttpServer {
  /** Plain HTTP, as people and local tools use it. */
  readonly url: string;
  /** The same port over TLS. */
  readonly httpsUrl: string;
  readonly port: number;
  /**
   * Handles a request as this server does, calling `next` for one no route answered: the agents'
   * listener hands it the requests it admits, so they meet the same edge (request ids, metrics,
   * the TLS rule for agent tokens, limits, error handling) as on this port.
   */
  readonly handle: (request: Request, response: Response, next: NextFunction) => void;
  close(): Promise<void>;
}

const MIN_TLS_VERSION = 'TLSv1.2';

const extraRules = queryLimitRules(QUERY_LIMITS);

/** What one WebSocket connection may ask for (unless WS_SUBSCRIPTIONS_PER_CONNECTION says otherwise). */
export const WEBSOCKET_LIMITS = {
  /** Subscriptions (and queries) running at once on one connection. */
  maxOperations: DEFAULT_WEBSOCKET_LIMITS.subscriptionsPerConnection,
  /** Operations started per minute on one connection; more closes it (4429). */
  maxOperationsPerMinute: 240,
} as const;

/** graphql-ws close code for a client that started more operations than allowed. */
const CLOSE_TOO_MANY_OPERATIONS = 4429;

/** Serves /graphql (HTTP and graphql-ws on the same path), health, readiness, metrics and the console. */
export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { logger, metrics, schema } = options;
  let listener: OnePortListener | null = null;
  const app = express();
  app.disable('x-powered-by');
  const { httpServer, tlsServer, stopCertificateUpdates } = plainAndTlsServers(app, options.certificate);

  /** The session's user of a bearer token (null for none, an agent token, or one that is not valid). */
  const userOf = async (authorization: unknown): Promise<AuthenticatedUser | null> => {
    const token = bearerToken(authorization);
    return token && !token.startsWith(`${AGENT_TOKEN_PREFIX}_`) ? options.authenticate(token) : null;
  };
  const contextFor = async (authorization: unknown, requestId: string, request: IncomingMessage, known?: AuthenticatedUser | null): Promise<RequestContext> => {
    const token = bearerToken(authorization);
    const isAgent = token?.startsWith(`${AGENT_TOKEN_PREFIX}_`) ?? false;
    const user = known !== undefined ? known : await userOf(authorization);
    const origin = options.origin(request);
    return { requestId, user, agentToken: isAgent ? token : null, events: options.events, origin, logger: logger.child({ requestId, user: user?.username }) };
  };

  const admission = new WebSocketAdmission(options.webSocketLimits ?? DEFAULT_WEBSOCKET_LIMITS, (limit) => metrics.webSocketRefusals.inc({ limit }));
  metrics.followWebSockets(() => admission.connections);
  const wsServer = new WebSocketServer({ noServer: true, path: '/graphql', maxPayload: options.maxRequestBytes });
  for (const server of [httpServer, tlsServer]) {
    server.on('upgrade', (req, socket, head) =>
      wsServer.handleUpgrade(req, socket, head, (ws) => {
        const refusal = admission.admitSocket(ws);
        if (refusal) {
          ws.close(refusal.code, refusal.reason);
          return;
        }
        wsServer.emit('connection', ws, req);
      }),
    );
  }
  const liveSessions = trackLiveSessions(options.events, logger);
  const wsCleanup = useServer<{ authorization?: unknown }, WebSocketState>(
    {
      schema,
      // Subscriptions need a signed-in user; the token comes in connection_init.
      onConnect: async (ctx) => {
        const context = await contextFor(ctx.connectionParams?.authorization, randomUUID(), ctx.extra.request);
        if (!context.user) {
          return false;
        }
        const refusal = admission.admitUser(context.user, ctx.extra.socket);
        if (refusal) {
          // Sent before graphql-ws's own 4403 for `false`, so the client reads this code and reason.
          ctx.extra.socket.close(refusal.code, refusal.reason);
          return false;
        }
        ctx.extra.context = context;
        ctx.extra.started = [];
        const token = bearerToken(ctx.connectionParams?.authorization) ?? '';
        liveSessions.add(context.user, ctx.extra.socket, () => options.authenticate(token, { fresh: true }));
        return true;
      },
      // Every operation is parsed, validated and bounded here, as on the HTTP path.
      onSubscribe: (ctx, _id, payload) => {
        const admitted = admitWebSocketOperation(schema, ctx.extra, Object.keys(ctx.subscriptions).length, admission.limits.subscriptionsPerConnection, payload);
        const refusedFor = Array.isArray(admitted) ? admitted[0]?.extensions['limit'] : undefined;
        if (refusedFor === 'subscriptions' || refusedFor === 'rate') {
          metrics.webSocketRefusals.inc({ limit: refusedFor });
        }
        return admitted;
      },
      // What the connection kept goes with it, whoever still holds the context object.
      onClose: (ctx) => {
        ctx.extra.context = undefined;
        ctx.extra.started = undefined;
      },
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? formatResult(result.errors, result, logger) : undefined),
    },
    wsServer,
  );

  const apollo = new ApolloServer<RequestContext>({
    schema,
    validationRules: extraRules,
    // The parser stops after this many tokens, so an oversized document is refused for the cost of reading that far.
    parseOptions: { maxTokens: QUERY_LIMITS.maxTokens },
    includeStacktraceInErrorResponses: false,
    introspection: true,
    // main.ts owns the signals and stops everything in order; Apollo stopping on its own hangs a second stop().
    stopOnTerminationSignals: false,
    formatError: (formatted, error) => withoutSecrets(maskUnexpected(formatted, error, logger)),
    plugins: [
      // Apollo's landing page loads its code and fonts from the internet; GET /graphql serves the bundled GraphiQL instead.
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginDrainHttpServer({ httpServer }),
      // Apollo's stopper handles https.Server too (it listens for secureConnection); only its type says http.Server.
      ApolloServerPluginDrainHttpServer({ httpServer: tlsServer as unknown as PlainServer }),
      { async serverWillStart() { return { async drainServer() { liveSessions.stop(); await wsCleanup.dispose(); } }; } },
      { async serverWillStart() { return { async drainServer() { stopCertificateUpdates(); await listener?.close(10_000); } }; } },
      metricsPlugin(metrics),
      operationGate(schema),
    ],
  });
  await apollo.start();

  app.use(requestIds(logger));
  app.use(securityHeaders);
  app.use(httpMetrics(metrics));
  app.use(agentTokensNeedTls(options.agentPlainHttp, logger));
  for (const path of ['/healthz', '/readyz'] as const) {
    app.get(path, async (_req, res) => {
      const { code, body } = await probeAnswer(path, options.readiness);
      res.status(code).json(body);
    });
  }
  if (options.serveMetrics ?? true) {
    app.get('/metrics', async (_req, res) => {
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  }
  serveGraphqlIde(app, options.graphiqlDir);
  app.use(
    '/graphql',
    // The session is read before the body, so that a request without one is held to the smaller limit.
    (req: Request, response: Response, next: NextFunction) => {
      userOf(req.headers.authorization).then((user) => {
        response.locals['user'] = user;
        next();
      }, next);
    },
    jsonBodies(options.maxRequestBytes, options.maxAnonymousRequestBytes ?? options.maxRequestBytes),
    // The request's own scope of secret values for its logs and errors; opened after the body is read, as its stream callbacks would not carry it.
    (_req: Request, _res: Response, next: NextFunction) => withRequestSecrets(next),
    expressMiddleware(apollo, { context: async ({ req }) => contextFor(req.headers.authorization, String(res(req).locals['requestId']), req, res(req).locals['user'] as AuthenticatedUser | null) }),
  );
  options.routes?.(app);
  serveConsole(app, options.consoleDir);
  app.use(errorHandler(logger));

  listener = await listenOnOnePort({ port: options.port, host: options.host, tls: tlsServer, plain: httpServer });
  const port = listener.port;
  const shownHost = options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
  const authority = `${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
  return {
    url: `http://${authority}`,
    httpsUrl: `https://${authority}`,
    port,
    handle: (request, response, next) => app(request, response, next),
    async close() {
      await apollo.stop();
    },
  };
}

/**
 * The plain HTTP and the TLS server of one port, sharing `app`. Neither listens: listenOnOnePort
 * hands each its connections. New handshakes get the certificate as it is then; connections
 * already open keep theirs.
 */
export function plainAndTlsServers(app: RequestListener, certificate: ServerCertificate): { readonly httpServer: PlainServer; readonly tlsServer: ReturnType<typeof createTlsServer>; stopCertificateUpdates(): void } {
  const httpServer = createServer(app);
  const tlsServer = createTlsServer({ ...certificate.serverOptions(), minVersion: MIN_TLS_VERSION }, app);
  const stopCertificateUpdates = certificate.onChange(() => tlsServer.setSecureContext({ ...certificate.serverOptions(), minVersion: MIN_TLS_VERSION }));
  return { httpServer, tlsServer, stopCertificateUpdates };
}

function res(req: Request): Response {
  return req.res as Response;
}

/** Every request gets an id (the caller's, if it sent a sane one), echoed in `x-request-id`. */
function requestIds(logger: Logger) {
  return (req: Request, response: Response, next: NextFunction) => {
    const offered = req.header('x-request-id');
    const requestId = offered && /^[\w.-]{1,64}$/.test(offered) ? offered : randomUUID();
    response.locals['requestId'] = requestId;
    response.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    response.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.debug({ requestId, method: req.method, path: req.path, status: response.statusCode, ms }, 'request');
    });
    next();
  };
}

/**
 * The Content-Security-Policy of every response but the GraphQL IDE's (which has its own, below):
 * the console loads and calls only this origin (its graphql-ws included: 'self' covers ws:/wss: of
 * it), no page may frame it (clickjacking), and no plugin runs. Angular adds component styles as
 * <style> elements at run time, so styles may be inline; scripts may not.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** HSTS for a year: browsers then reach this host over HTTPS only. Sent on HTTPS responses only, as RFC 6797 requires. */
const STRICT_TRANSPORT_SECURITY = 'max-age=31536000';

/** Headers every response carries: the policy above, no MIME sniffing, and HSTS on TLS connections. */
function securityHeaders(req: Request, response: Response, next: NextFunction): void {
  response.setHeader('content-security-policy', CONSOLE_CONTENT_SECURITY_POLICY);
  response.setHeader('x-content-type-options', 'nosniff');
  // req.secure is the socket's own TLS (no proxy is trusted to claim it).
  if (req.secure) {
    response.setHeader('strict-transport-security', STRICT_TRANSPORT_SECURITY);
  }
  next();
}

/**
 * An agent token travels only over TLS unless the operator said otherwise: on a plain
 * connection anyone on the path could read it (and the answers could be forged), so the
 * request is refused whatever it asks for. People's sessions on plain http://localhost
 * are not affected.
 */
function agentTokensNeedTls(allowPlain: boolean, logger: Logger) {
  return (req: Request, response: Response, next: NextFunction) => {
    // req.secure is the socket's own TLS: the app trusts no proxy, so no X-Forwarded-Proto can claim it.
    if (allowPlain || req.secure || !bearerToken(req.headers.authorization)?.startsWith(`${AGENT_TOKEN_PREFIX}_`)) {
      next();
      return;
    }
    logger.warn({ path: req.path, remote: req.socket.remoteAddress }, 'refused an agent token sent over plain HTTP');
    const httpsRequired = message('agentToken.httpsOnly');
    response.status(403).json({
      errors: [{ message: httpsRequired.message, extensions: { code: 'HTTPS_REQUIRED', messageCode: httpsRequired.code, messageParams: httpsRequired.params } }],
    });
  };
}

function httpMetrics(metrics: ApiMetrics) {
  return (req: Request, response: Response, next: NextFunction) => {
    const end = metrics.httpDuration.startTimer();
    response.on('finish', () => {
      const route = routeLabel(req.originalUrl.split('?')[0] ?? '');
      const method = methodLabel(req.method);
      end({ method, route });
      metrics.httpRequests.inc({ method, route, status: String(response.statusCode) });
    });
    next();
  };
}

function metricsPlugin(metrics: ApiMetrics): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      return {
        async willSendResponse({ operation, operationName, errors }) {
          const type = operation?.operation ?? 'unknown';
          // The name is the client's text: only the service's own operation names become labels.
          const name = operationLabel(operationName);
          metrics.graphqlDuration.observe({ type, operation: name }, Number(process.hrtime.bigint() - started) / 1e9);
          metrics.graphqlOperations.inc({ type, operation: name, outcome: errors?.length ? 'error' : 'ok' });
        },
      };
    },
  };
}

/**
 * Errors we raised on purpose carry a code and pass through; anything else is logged
 * with its request id and reaches the client as a bare INTERNAL_SERVER_ERROR, so no
 * driver message or stack (which might quote a secret) leaks out.
 */
function maskUnexpected(formatted: GraphQLFormattedError, error: unknown, logger: Logger): GraphQLFormattedError {
  const raised = graphQLErrorOf(formatted, error);
  if (raised && raised.extensions?.['code'] !== 'INTERNAL_SERVER_ERROR') {
    return raised;
  }
  const code = formatted.extensions?.['code'];
  const original = error instanceof GraphQLError ? error.originalError : error;
  const deliberate = !original || original instanceof GraphQLError;
  // graphql's own refusal of a request (e.g. "Too many errors processing variables") has no code, no cause and no path.
  if (!original && !formatted.path && code === 'INTERNAL_SERVER_ERROR') {
    return { message: formatted.message, locations: formatted.locations, extensions: { code: 'BAD_USER_INPUT' } };
  }
  if (deliberate && code !== 'INTERNAL_SERVER_ERROR') {
    return { message: formatted.message, path: formatted.path, locations: formatted.locations, extensions: { ...formatted.extensions, stacktrace: undefined } };
  }
  const errorId = randomUUID();
  logger.error({ err: original, errorId, path: formatted.path }, 'unexpected error in a GraphQL operation');
  const text = message('error.internal', { errorId });
  return { message: text.message, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR', errorId, messageCode: text.code, messageParams: text.params } };
}

/** What a graphql-ws connection keeps between its messages. */
type WebSocketState = {
  context?: RequestContext;
  /** When (ms) each operation of the last minute started. */
  started?: number[];
};

function wsRefusal(message: string, code = 'BAD_USER_INPUT', limit?: WebSocketLimitName): GraphQLError[] {
  return [new GraphQLError(message, { extensions: limit ? { code, limit } : { code } })];
}

/**
 * The WebSocket path's admission of one operation: at most `maxRunning` at once and
 * {@link WEBSOCKET_LIMITS}.maxOperationsPerMinute per connection,
 * the same token limit, validation rules and cost limit as HTTP, and no mutations. Mutations go
 * over HTTP only, where the request id, body limit and per-request secret scrubbing of their audit
 * and logs apply; refusing them here keeps a second path from needing all of that again.
 */
function admitWebSocketOperation(schema: GraphQLSchema, extra: Partial<WebSocketState> & { readonly socket: WebSocket }, running: number, maxRunning: number, payload: SubscribePayload): ExecutionArgs | GraphQLError[] {
  const context = extra.context;
  if (!context) {
    return wsRefusal('sign in first: send the bearer token in connection_init', 'UNAUTHENTICATED');
  }
  const now = Date.now();
  const recent = (extra.started ?? []).filter((at) => now - at < 60_000);
  recent.push(now);
  extra.started = recent;
  if (recent.length > WEBSOCKET_LIMITS.maxOperationsPerMinute) {
    extra.socket.close(CLOSE_TOO_MANY_OPERATIONS, `Too many operations: at most ${WEBSOCKET_LIMITS.maxOperationsPerMinute} a minute`);
    return wsRefusal(`at most ${WEBSOCKET_LIMITS.maxOperationsPerMinute} operations a minute on one connection`, 'TOO_MANY_REQUESTS', 'rate');
  }
  if (running > maxRunning) {
    return wsRefusal(`at most ${maxRunning} subscriptions at once on one connection; complete one first`, 'TOO_MANY_REQUESTS', 'subscriptions');
  }
  let document: DocumentNode;
  try {
    document = parse(payload.query, { maxTokens: QUERY_LIMITS.maxTokens });
  } catch (error) {
    return error instanceof GraphQLError ? [error] : wsRefusal('the query cannot be parsed');
  }
  const errors = validate(schema, document, [...specifiedRules, ...extraRules]);
  if (errors.length > 0) {
    return [...errors];
  }
  const operation = getOperationAST(document, payload.operationName);
  if (!operation) {
    return wsRefusal('the document has no operation of that name (or several, and no operationName)');
  }
  if (operation.operation === 'mutation') {
    return wsRefusal('mutations are accepted over HTTP only (POST /graphql); the WebSocket carries subscriptions and queries');
  }
  const variables = payload.variables ?? undefined;
  const tooCostly = costRefusal(operationCost(schema, document, operation, variables));
  if (tooCostly) {
    return [tooCostly];
  }
  return {
    schema,
    document,
    operationName: payload.operationName,
    variableValues: variables,
    contextValue: { ...context, requestId: randomUUID() } satisfies RequestContext,
  };
}

/** A WebSocket result with its errors formatted as on HTTP (unexpected ones masked). */
function formatResult(errors: readonly GraphQLError[], result: { readonly data?: unknown }, logger: Logger): FormattedExecutionResult {
  return {
    data: result.data as FormattedExecutionResult['data'],
    errors: errors.map((error) => withoutSecrets(maskUnexpected(error.toJSON(), error, logger))),
  };
}

/**
 * The HTTP path's gate after parsing: the values sent in `@secret` positions become known to the
 * request's logs and errors (also those of validation, which can quote a literal), introspection
 * is for signed-in users, and an operation may not cost more than {@link QUERY_LIMITS}.maxCost.
 */
function operationGate(schema: GraphQLSchema): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async validationDidStart({ document, request }) {
          rememberRequestSecrets(secretValuesInRequest(schema, document, request.variables));
        },
        async didResolveOperation({ document, operation, request, contextValue }) {
          // A document Apollo has seen before skips validation, and so validationDidStart.
          rememberRequestSecrets(secretValuesInRequest(schema, document, request.variables));
          if (!operation) {
            return;
          }
          if (!contextValue.user && selectsIntrospection(document, operation)) {
            throw new GraphQLError('introspection needs a signed-in user: sign in and send the bearer token', {
              extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
            });
          }
          const tooCostly = costRefusal(operationCost(schema, document, operation, request.variables));
          if (tooCostly) {
            throw tooCostly;
          }
        },
      };
    },
  };
}

/** An error as sent, without the request's secret values and anything that looks like a credential. */
function withoutSecrets(formatted: GraphQLFormattedError): GraphQLFormattedError {
  return { ...formatted, message: scrubSecrets(scrubRequestSecrets(formatted.message)) };
}

/**
 * The GraphQL IDE: GET /graphql from a browser (Accept: text/html, no query) gets GraphiQL's page,
 * its scripts, styles and Monaco workers come from /graphql/ide. All of it is built into the
 * service (apps/graphiql), and the policy below keeps the page from loading or calling anything
 * but this origin (its own ws:/wss: included).
 */
function serveGraphqlIde(app: express.Express, graphiqlDir: string): void {
  const index = join(graphiqlDir, 'index.html');
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "worker-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "font-src 'self' data:",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  app.use('/graphql/ide', (_req, response, next) => {
    response.setHeader('content-security-policy', policy);
    next();
  }, express.static(graphiqlDir, { index: false, maxAge: '1h', fallthrough: false }));
  app.get('/graphql', (req, response, next) => {
    const wantsPage = req.query['query'] === undefined && req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
    if (!wantsPage) {
      next();
      return;
    }
    if (!existsSync(index)) {
      response.status(503).type('text/plain').send('The GraphQL IDE is not built yet: run `npm run build` (npm start does it for you).\n');
      return;
    }
    response.setHeader('content-security-policy', policy);
    response.setHeader('cache-control', 'no-cache');
    response.sendFile(index);
  });
}

/** The built console, with index.html for client-side routes. */
function serveConsole(app: express.Express, consoleDir: string): void {
  const index = join(consoleDir, 'index.html');
  app.use(compressedAssets(consoleDir, 3600));
  app.use(express.static(consoleDir, { index: false, maxAge: '1h' }));
  app.get(/^\/(?!graphql|healthz|readyz|metrics|artifacts|agent).*/, (_req, response) => {
    if (existsSync(index)) {
      response.setHeader('cache-control', 'no-cache');
      response.sendFile(index);
    } else {
      response.status(503).type('text/plain').send('The console is not built yet: run `npm run build` (npm start does it for you).\n');
    }
  });
}

/**
 * The deepest nesting of arrays and objects a JSON body may have. GraphQL variables of this
 * schema nest a few levels; JSON scalars (an agent's `detail`) a few more. Deeper nesting only
 * costs the parser, the scalars' coercion and every walk over the value.
 */
export const MAX_JSON_DEPTH = 32;

/** Whether `body` (JSON text) nests arrays and objects deeper than `max`, found in one pass before it is parsed. */
export function jsonNestsDeeperThan(body: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index];
    if (inString) {
      if (byte === 0x5c) {
        index++;
      } else if (byte === 0x22) {
        inString = false;
      }
    } else if (byte === 0x22) {
      inString = true;
    } else if (byte === 0x7b || byte === 0x5b) {
      depth++;
      if (depth > max) {
        return true;
      }
    } else if (byte === 0x7d || byte === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** body-parser's `verify`: refuses a body nested deeper than {@link MAX_JSON_DEPTH} before JSON.parse sees it. */
function refuseDeepJson(_req: unknown, _res: unknown, body: Buffer): void {
  if (jsonNestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw Object.assign(new Error(`JSON nested more than ${MAX_JSON_DEPTH} levels deep`), { status: 400, type: 'entity.too.deep', maxDepth: MAX_JSON_DEPTH });
  }
}

/** A JSON body parser with the edge's limits: `limit` bytes and {@link MAX_JSON_DEPTH} levels. */
export function jsonBody(limit: number) {
  return express.json({ limit, verify: refuseDeepJson });
}

/**
 * JSON bodies of /graphql: `signedIn` bytes with a signed-in session (`res.locals.user`, read
 * before), `anonymous` bytes without one. Reading and parsing a large body costs CPU, and anyone
 * may send one; a refusal says which limit applied.
 */
function jsonBodies(signedIn: number, anonymous: number) {
  const full = jsonBody(signedIn);
  const small = jsonBody(anonymous);
  return (req: Request, response: Response, next: NextFunction) => {
    if (response.locals['user']) {
      full(req, response, next);
      return;
    }
    small(req, response, (error?: unknown) => {
      const tooLarge = typeof error === 'object' && error !== null && (error as { type?: unknown }).type === 'entity.too.large';
      next(tooLarge ? Object.assign(error, { anonymousLimit: anonymous }) : error);
    });
  };
}

/** Errors of a route or a body parser as a coded JSON answer; 5xx are logged, and no parser message (which may quote the body) is sent. */
export function errorHandler(logger: Logger) {
  return (error: Error & { status?: number; type?: string; anonymousLimit?: number; maxDepth?: number }, req: Request, response: Response, _next: NextFunction) => {
    const status = error.status ?? 500;
    if (status >= 500) {
      logger.error({ err: error, path: req.path }, 'request failed');
    }
    // body-parser's own messages quote the start of the body, which may hold a secret.
    const text =
      error.type === 'entity.too.large' && error.anonymousLimit !== undefined
        ? message('error.anonymousBodyTooLarge', { max: error.anonymousLimit })
        : error.type === 'entity.too.deep'
          ? message('error.jsonTooDeep', { max: error.maxDepth ?? MAX_JSON_DEPTH })
          : message(
              error.type === 'entity.too.large' ? 'error.bodyTooLarge' : error.type === 'entity.parse.failed' ? 'error.bodyNotJson' : status >= 500 ? 'error.internalBare' : 'error.badRequest',
            );
    const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST';
    response.status(status).json({ errors: [{ message: text.message, extensions: { code, messageCode: text.code, messageParams: text.params } }] });
  };
}
