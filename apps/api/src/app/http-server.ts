import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { type IncomingMessage, type Server as PlainServer, createServer } from 'node:http';
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
import type { ApiMetrics } from './metrics';
import { type OnePortListener, listenOnOnePort } from './tls/one-port-listener';

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
  readonly schema: GraphQLSchema;
  readonly logger: Logger;
  readonly metrics: ApiMetrics;
  /** Resolves a session bearer token to its user (null when invalid or expired). */
  readonly authenticate: (token: string) => Promise<AuthenticatedUser | null>;
  /** Where a request came from (the peer, or the client behind a trusted proxy). */
  readonly origin: (request: IncomingMessage) => RequestOrigin;
  readonly ready: () => Promise<boolean>;
  readonly events: EventBus;
  /** Extra routes (e.g. the artifact server) mounted before the console. */
  readonly routes?: (app: express.Express) => void;
  /** Served to clients that open with a TLS handshake; the others get plain HTTP on the same port. */
  readonly certificate: ServerCertificate;
  /** Accept agent tokens on plain HTTP connections too (AGENT_PLAIN_HTTP=allow). */
  readonly agentPlainHttp: boolean;
}

export interface HttpServer {
  /** Plain HTTP, as people and local tools use it. */
  readonly url: string;
  /** The same port over TLS. */
  readonly httpsUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

const MIN_TLS_VERSION = 'TLSv1.2';

const extraRules = queryLimitRules(QUERY_LIMITS);

/** What one WebSocket connection may ask for. */
export const WEBSOCKET_LIMITS = {
  /** Subscriptions (and queries) running at once on one connection. */
  maxOperations: 32,
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
  // Both servers share the app; neither listens: listenOnOnePort hands each its connections.
  const httpServer = createServer(app);
  const tlsServer = createTlsServer({ ...options.certificate.serverOptions(), minVersion: MIN_TLS_VERSION }, app);
  // New handshakes get the new certificate; connections already open keep theirs.
  const stopCertificateUpdates = options.certificate.onChange(() => tlsServer.setSecureContext({ ...options.certificate.serverOptions(), minVersion: MIN_TLS_VERSION }));

  const contextFor = async (authorization: unknown, requestId: string, request: IncomingMessage): Promise<RequestContext> => {
    const token = bearerToken(authorization);
    const isAgent = token?.startsWith(`${AGENT_TOKEN_PREFIX}_`) ?? false;
    const user = token && !isAgent ? await options.authenticate(token) : null;
    const origin = options.origin(request);
    return { requestId, user, agentToken: isAgent ? token : null, events: options.events, origin, logger: logger.child({ requestId, user: user?.username }) };
  };

  const wsServer = new WebSocketServer({ noServer: true, path: '/graphql', maxPayload: options.maxRequestBytes });
  for (const server of [httpServer, tlsServer]) {
    server.on('upgrade', (req, socket, head) => wsServer.handleUpgrade(req, socket, head, (ws) => wsServer.emit('connection', ws, req)));
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
        ctx.extra.context = context;
        ctx.extra.started = [];
        liveSessions.add(context.user, ctx.extra.socket);
        return true;
      },
      // Every operation is parsed, validated and bounded here, as on the HTTP path.
      onSubscribe: (ctx, _id, payload) => admitWebSocketOperation(schema, ctx.extra, Object.keys(ctx.subscriptions).length, payload),
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
  app.use(httpMetrics(metrics));
  app.use(agentTokensNeedTls(options.agentPlainHttp, logger));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ready = await options.ready();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'database unreachable' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  serveGraphqlIde(app, options.graphiqlDir);
  app.use(
    '/graphql',
    express.json({ limit: options.maxRequestBytes }),
    // The request's own scope of secret values for its logs and errors; opened after the body is read, as its stream callbacks would not carry it.
    (_req: Request, _res: Response, next: NextFunction) => withRequestSecrets(next),
    expressMiddleware(apollo, { context: async ({ req }) => contextFor(req.headers.authorization, String(res(req).locals['requestId']), req) }),
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
    async close() {
      await apollo.stop();
    },
  };
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
      end({ method: req.method, route });
      metrics.httpRequests.inc({ method: req.method, route, status: String(response.statusCode) });
    });
    next();
  };
}

/** A bounded set of route labels, so odd paths cannot blow up the metric's cardinality. */
function routeLabel(path: string): string {
  const first = `/${path.split('/')[1] ?? ''}`;
  return ['/graphql', '/healthz', '/readyz', '/metrics', '/artifacts', '/agent'].includes(first) ? first : 'console';
}

function metricsPlugin(metrics: ApiMetrics): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      return {
        async willSendResponse({ operation, operationName, errors }) {
          const type = operation?.operation ?? 'unknown';
          const name = operationName ?? 'anonymous';
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

function wsRefusal(message: string, code = 'BAD_USER_INPUT'): GraphQLError[] {
  return [new GraphQLError(message, { extensions: { code } })];
}

/**
 * The WebSocket path's admission of one operation: at most {@link WEBSOCKET_LIMITS} per connection,
 * the same token limit, validation rules and cost limit as HTTP, and no mutations. Mutations go
 * over HTTP only, where the request id, body limit and per-request secret scrubbing of their audit
 * and logs apply; refusing them here keeps a second path from needing all of that again.
 */
function admitWebSocketOperation(schema: GraphQLSchema, extra: Partial<WebSocketState> & { readonly socket: WebSocket }, running: number, payload: SubscribePayload): ExecutionArgs | GraphQLError[] {
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
    return wsRefusal(`at most ${WEBSOCKET_LIMITS.maxOperationsPerMinute} operations a minute on one connection`, 'TOO_MANY_REQUESTS');
  }
  if (running > WEBSOCKET_LIMITS.maxOperations) {
    return wsRefusal(`at most ${WEBSOCKET_LIMITS.maxOperations} subscriptions at once on one connection; complete one first`, 'TOO_MANY_REQUESTS');
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

function errorHandler(logger: Logger) {
  return (error: Error & { status?: number; type?: string }, req: Request, response: Response, _next: NextFunction) => {
    const status = error.status ?? 500;
    if (status >= 500) {
      logger.error({ err: error, path: req.path }, 'request failed');
    }
    // body-parser's own messages quote the start of the body, which may hold a secret.
    const text = message(
      error.type === 'entity.too.large' ? 'error.bodyTooLarge' : error.type === 'entity.parse.failed' ? 'error.bodyNotJson' : status >= 500 ? 'error.internalBare' : 'error.badRequest',
    );
    const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST';
    response.status(status).json({ errors: [{ message: text.message, extensions: { code, messageCode: text.code, messageParams: text.params } }] });
  };
}
