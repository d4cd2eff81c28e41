import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import {
  ApiException,
  AppsV1Api,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CertificatesV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  Observable,
  PolicyV1Api,
  VersionApi,
  Watch,
  type Cluster,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
  type User,
} from '@kubernetes/client-node';
import { scrubSecrets } from '@ccos/shared/util-redaction';
import { ClusterAddressGuard, type ClusterAddressRefusedError, hostOf } from './cluster-address';

/**
 * Stored credentials of a cluster, structurally the same as feature-clusters' `ClusterCredentials`
 * (kept apart so data-access does not import a feature).
 */
export type KubeCredentials =
  | { readonly kind: 'KUBECONFIG'; readonly kubeconfig: string }
  | { readonly kind: 'TOKEN'; readonly token: string; readonly caCert: string | null };

/** Input of {@link createKubeClient}. */
export interface KubeClientOptions {
  /** The cluster's registered API server URL; it replaces the server of the kubeconfig's current cluster. */
  apiServerUrl: string;
  credentials: KubeCredentials;
  /** Upper bound of every non-watch request, in ms. Default 30 000. */
  requestTimeoutMs?: number;
  /**
   * Permits `http://` and a kubeconfig's `insecure-skip-tls-verify`, which the client refuses
   * otherwise: the cluster's registration says so explicitly. Default false.
   */
  allowInsecureTransport?: boolean;
  /** Which addresses the client may connect to; checked on every connection. Default: no loopback, link-local or metadata address. */
  addresses?: ClusterAddressGuard;
}

/** The parts of a Kubernetes `Status` object this library reads. */
export interface KubeStatus {
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: {
    readonly name?: string;
    readonly kind?: string;
    readonly causes?: ReadonlyArray<{ readonly reason?: string; readonly message?: string; readonly field?: string }>;
  };
}

/** Why a request failed: the API answered with an error, it took too long, the caller cancelled it, or the server was not reached. */
export type KubeApiErrorKind = 'status' | 'timeout' | 'aborted' | 'network';

/**
 * A failed API request. The message names the operation and what the API (or the network) said;
 * it never carries credentials. The original error is kept as `cause`.
 */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';

  constructor(
    message: string,
    /** What was attempted, e.g. `evict pod shop/web-1`. */
    readonly operation: string,
    readonly kind: KubeApiErrorKind,
    /** HTTP status code when the API answered. */
    readonly statusCode: number | null,
    /** The `Status` body the API answered with, when there was one. */
    readonly status: KubeStatus | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** `Status.reason` (`NotFound`, `Conflict`, `TooManyRequests`, ...), when the API answered. */
  get reason(): string | null {
    return this.status?.reason ?? null;
  }
}

/** The credentials or the kubeconfig cannot be used. The message never contains their content. */
export class KubeClientConfigError extends Error {
  override readonly name = 'KubeClientConfigError';
}

/** Receives each line of a watch stream. */
export type WatchLineHandler = (type: string, object: unknown) => void;

/**
 * Typed API groups of one cluster, plus {@link KubeClient.call} which every module uses so that
 * requests have a timeout, honour an AbortSignal and fail with {@link KubeApiError}.
 */
export interface KubeClient {
  /** The API server URL requests go to. */
  readonly server: string;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly policy: PolicyV1Api;
  readonly certificates: CertificatesV1Api;
  readonly coordination: CoordinationV1Api;
  /** SelfSubjectReview: who the credentials are to the API server. */
  readonly authentication: AuthenticationV1Api;
  readonly authorization: AuthorizationV1Api;
  /** `GET /version`. */
  readonly versions: VersionApi;
  /** Resources of API groups client-node has no typed client for (OpenShift's ClusterVersion). */
  readonly customObjects: CustomObjectsApi;
  /**
   * Runs one request: `run` receives the per-call options (timeout and cancellation) to pass to
   * the client-node method. Failures are rethrown as {@link KubeApiError}.
   */
  call<T>(operation: string, run: (options: ConfigurationOptions) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /**
   * Opens a watch (`?watch=true`) on a collection path and passes every line to `onLine` until the
   * server closes the stream (resolves), the stream fails (rejects with {@link KubeApiError}) or
   * `signal` aborts (resolves). `onOpen` is told once the server answered 200 (the stream is open).
   */
  watch(path: string, query: Record<string, string | number | boolean | undefined>, onLine: WatchLineHandler, signal: AbortSignal, onOpen?: () => void): Promise<void>;
  /**
   * A client of the same API server (same CA and TLS settings) that authenticates with `token`
   * instead, e.g. to ask what an identity this service minted may do. Close it when done.
   */
  withToken(token: string): KubeClient;
  /** Closes idle keep-alive connections. */
  close(): void;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

function passThrough<T>(value: T): Observable<T> {
  return new Observable(Promise.resolve(value));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A Status from an ApiException body (JSON text, a Buffer or an object). */
function statusFromBody(body: unknown): KubeStatus | null {
  let value: unknown = body;
  if (Buffer.isBuffer(value)) {
    value = value.toString('utf8');
  }
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return isRecord(value) && (value['kind'] === 'Status' || typeof value['message'] === 'string') ? sanitizedStatus(value as KubeStatus) : null;
}

/** The most of a foreign message (the API server's `Status.message`) a client error carries. */
const MAX_EXCERPT = 300;

/**
 * A bounded, one-line excerpt of text the API server sent, without what looks like a key,
 * a certificate or a token: a server (or whatever answers at its address) decides what it says.
 */
export function excerptOf(text: string, max = MAX_EXCERPT): string {
  // The service's one scrubber for foreign text, as for the machine config server's answers.
  const scrubbed = scrubSecrets(text);
  const oneLine = Array.from(scrubbed, (char) => (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f ? ' ' : char)).join('');
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

/** Only the fields this library reads, each message an {@link excerptOf} excerpt, at most 20 causes. */
function sanitizedStatus(status: KubeStatus): KubeStatus {
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? excerptOf(value) : undefined);
  const details = isRecord(status.details) ? status.details : undefined;
  return {
    code: typeof status.code === 'number' ? status.code : undefined,
    reason: text(status.reason),
    message: text(status.message),
    details: details
      ? {
          name: text(details.name),
          kind: text(details.kind),
          causes: Array.isArray(details.causes) ? details.causes.slice(0, 20).map((cause) => ({ reason: text(cause?.reason), message: text(cause?.message), field: text(cause?.field) })) : undefined,
        }
      : undefined,
  };
}

/** Strings that must never appear in an error message: the token, keys, the kubeconfig itself. */
function secretsOf(credentials: KubeCredentials, user: User | null): string[] {
  const values = credentials.kind === 'TOKEN' ? [credentials.token] : [credentials.kubeconfig, user?.token, user?.password, user?.keyData, user?.certData];
  return values.filter((value): value is string => typeof value === 'string' && value.length >= 6);
}

function redactor(secrets: readonly string[]): (text: string) => string {
  return (text) => secrets.reduce((out, secret) => out.split(secret).join('[redacted]'), text);
}

/** The system error code (ECONNREFUSED, ...) of an error or one of its causes. */
function networkCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && isRecord(current); depth++) {
    if (typeof current['code'] === 'string') {
      return current['code'];
    }
    current = current['cause'];
  }
  return null;
}

/** The line and column of a YAML error, without the excerpt of the document js-yaml puts in its message. */
function yamlPosition(error: unknown): string {
  const mark = isRecord(error) && isRecord(error['mark']) ? error['mark'] : null;
  return mark && typeof mark['line'] === 'number' && typeof mark['column'] === 'number' ? ` (line ${mark['line'] + 1}, column ${mark['column'] + 1})` : '';
}

/**
 * client-node opens a watch with an agent of its own making; this one hands out the client's
 * agent instead, so watches connect through the same address checks and keep-alive pool.
 */
class GuardedKubeConfig extends KubeConfig {
  agent: HttpAgent | HttpsAgent | null = null;

  override async applyToFetchOptions(opts: Parameters<KubeConfig['applyToFetchOptions']>[0]): ReturnType<KubeConfig['applyToFetchOptions']> {
    const init = await super.applyToFetchOptions(opts);
    return this.agent ? { ...init, agent: this.agent } : init;
  }
}

const INSECURE_HINT = 'register the cluster with allowInsecureTransport: true only if it really has no verifiable TLS';

function loadKubeconfig(options: KubeClientOptions): GuardedKubeConfig {
  const { credentials, apiServerUrl } = options;
  const insecureAllowed = options.allowInsecureTransport === true;
  const plainHttp = apiServerUrl.startsWith('http://');
  if (plainHttp && !insecureAllowed) {
    throw new KubeClientConfigError(`the API server URL ${apiServerUrl} uses http://, which sends the cluster credentials unencrypted; use its https:// URL, or ${INSECURE_HINT}`);
  }
  const host = hostOf(apiServerUrl);
  if (isIP(host) !== 0) {
    // Names are checked on every connection (the agent's lookup); an address literal is never looked up.
    const verdict = (options.addresses ?? new ClusterAddressGuard()).check(host);
    if (!verdict.ok) {
      throw new KubeClientConfigError(`the API server URL ${apiServerUrl} is refused: ${verdict.reason}`);
    }
  }
  const kc = new GuardedKubeConfig();
  if (credentials.kind === 'TOKEN') {
    kc.loadFromOptions({
      // client-node refuses http:// unless skipTLSVerify is set; it has no other meaning there.
      clusters: [{ name: 'cluster', server: apiServerUrl, caData: credentials.caCert ? Buffer.from(credentials.caCert, 'utf8').toString('base64') : undefined, skipTLSVerify: plainHttp }],
      users: [{ name: 'user', token: credentials.token }],
      contexts: [{ name: 'context', cluster: 'cluster', user: 'user' }],
      currentContext: 'context',
    });
    return kc;
  }
  try {
    kc.loadFromString(credentials.kubeconfig);
  } catch (error) {
    const reason = isRecord(error) && typeof error['reason'] === 'string' ? error['reason'] : 'unreadable';
    throw new KubeClientConfigError(`the kubeconfig is not valid YAML${yamlPosition(error)}`, { cause: new Error(reason) });
  }
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster || !user) {
    throw new KubeClientConfigError('the kubeconfig has no current context naming a cluster and a user');
  }
  // The kubeconfig is user-supplied content: running its exec plugins or reading files it names
  // on this host would let whoever registers a cluster run commands or read files here.
  if (user.exec || user.authProvider) {
    throw new KubeClientConfigError(`the kubeconfig user "${user.name}" uses an exec or auth-provider plugin; use a token or a client certificate`);
  }
  if (user.certFile || user.keyFile || cluster.caFile) {
    throw new KubeClientConfigError('the kubeconfig refers to files; embed the data (certificate-authority-data, client-certificate-data, client-key-data)');
  }
  if (cluster.proxyUrl) {
    throw new KubeClientConfigError(`the kubeconfig cluster "${cluster.name}" sets proxy-url, which the service does not use: it connects to the API server directly and checks the address it connects to; remove proxy-url`);
  }
  if (cluster.skipTLSVerify && !insecureAllowed) {
    throw new KubeClientConfigError(`the kubeconfig cluster "${cluster.name}" sets insecure-skip-tls-verify, so anyone on the network path could pose as the API server and receive the credentials; give the API server's CA as certificate-authority-data instead, or ${INSECURE_HINT}`);
  }
  const server: Cluster = { ...cluster, server: apiServerUrl, skipTLSVerify: cluster.skipTLSVerify || plainHttp };
  kc.loadFromOptions({
    clusters: kc.clusters.map((entry) => (entry.name === cluster.name ? server : entry)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
  });
  return kc;
}

/**
 * One keep-alive agent for all requests and watches. client-node builds a fresh agent (and TLS
 * handshake) per request; a drain of hundreds of pods would pay that hundreds of times. Its
 * lookup checks the addresses a name resolves to on every new connection.
 */
function sharedAgent(kc: KubeConfig, guard: ClusterAddressGuard, onRefused: (refusal: ClusterAddressRefusedError) => void): HttpAgent | HttpsAgent {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const lookup = guard.lookup(onRefused);
  if (cluster?.server.startsWith('http://')) {
    return new HttpAgent({ keepAlive: true, lookup });
  }
  const fromBase64 = (data: string | undefined): Buffer | undefined => (data ? Buffer.from(data, 'base64') : undefined);
  return new HttpsAgent({
    keepAlive: true,
    lookup,
    ca: fromBase64(cluster?.caData),
    cert: fromBase64(user?.certData),
    key: fromBase64(user?.keyData),
    rejectUnauthorized: !cluster?.skipTLSVerify,
    servername: cluster?.tlsServerName,
  });
}

/**
 * Builds a client from a cluster's stored credentials (a kubeconfig, or a bearer token with an
 * optional CA) and its registered API server URL. Throws {@link KubeClientConfigError} when the
 * credentials cannot be used; never puts them into a message.
 * @see https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/
 * @see https://github.com/kubernetes-client/javascript
 */
export function createKubeClient(options: KubeClientOptions): KubeClient {
  const kc = loadKubeconfig(options);
  return clientFor(kc, secretsOf(options.credentials, kc.getCurrentUser()), options);
}

function clientFor(kc: GuardedKubeConfig, secrets: readonly string[], options: KubeClientOptions): KubeClient {
  const redact = redactor(secrets);
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // The lookup's refusal reaches us only as an error code through node-fetch; its words are kept here.
  let lastRefusal: ClusterAddressRefusedError | null = null;
  const agent = sharedAgent(kc, options.addresses ?? new ClusterAddressGuard(), (refusal) => {
    lastRefusal = refusal;
  });
  kc.agent = agent;
  const watcher = new Watch(kc);

  const middleware = (signal: AbortSignal): ObservableMiddleware => ({
    pre(context: RequestContext): Observable<RequestContext> {
      context.setSignal(signal);
      context.setAgent(agent);
      return passThrough(context);
    },
    post: (context: ResponseContext): Observable<ResponseContext> => passThrough(context),
  });

  const wrap = (operation: string, error: unknown, timedOut: boolean, aborted: boolean): KubeApiError => {
    if (error instanceof KubeApiError) {
      return error;
    }
    if (error instanceof ApiException) {
      // The answer is the cluster's (or a proxy's) words: statusFromBody keeps scrubbed excerpts of it only.
      const status = statusFromBody(error.body);
      const what = status?.message ?? status?.reason ?? (error.code === 401 ? 'Unauthorized' : `HTTP ${error.code}`);
      const reason = status?.reason ? ` (${error.code} ${status.reason})` : ` (${error.code})`;
      // The ApiException holds the whole response body and headers; they stay out of the error (and so out of logs).
      return new KubeApiError(redact(`${operation}: ${what}${reason}`), operation, 'status', error.code, status, { cause: new Error(`HTTP ${error.code}`) });
    }
    const statusCode = isRecord(error) && typeof error['statusCode'] === 'number' ? error['statusCode'] : null;
    if (statusCode !== null) {
      return new KubeApiError(redact(`${operation}: HTTP ${statusCode}`), operation, 'status', statusCode, null, { cause: error });
    }
    if (aborted) {
      return new KubeApiError(`${operation}: cancelled`, operation, 'aborted', null, null, { cause: error });
    }
    if (timedOut) {
      return new KubeApiError(`${operation}: no answer within ${requestTimeoutMs} ms`, operation, 'timeout', null, null, { cause: error });
    }
    const refusal = networkCode(error) === 'ECLUSTERADDRESS' ? lastRefusal : null;
    if (refusal) {
      return new KubeApiError(`${operation}: not connecting to the API server at ${kc.getCurrentCluster()?.server ?? '?'}: ${refusal.message}`, operation, 'network', null, null, { cause: refusal });
    }
    const code = networkCode(error);
    return new KubeApiError(redact(`${operation}: cannot reach the API server at ${kc.getCurrentCluster()?.server ?? '?'}${code ? ` (${code})` : ''}`), operation, 'network', null, null, { cause: error });
  };

  return {
    server: kc.getCurrentCluster()?.server ?? options.apiServerUrl,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    policy: kc.makeApiClient(PolicyV1Api),
    certificates: kc.makeApiClient(CertificatesV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    authentication: kc.makeApiClient(AuthenticationV1Api),
    authorization: kc.makeApiClient(AuthorizationV1Api),
    versions: kc.makeApiClient(VersionApi),
    customObjects: kc.makeApiClient(CustomObjectsApi),

    withToken(token: string): KubeClient {
      const cluster = kc.getCurrentCluster();
      if (!cluster) {
        throw new KubeClientConfigError('the client has no cluster');
      }
      const other = new GuardedKubeConfig();
      other.loadFromOptions({
        clusters: [cluster],
        users: [{ name: 'token', token }],
        contexts: [{ name: 'token', cluster: cluster.name, user: 'token' }],
        currentContext: 'token',
      });
      return clientFor(other, [token], options);
    },

    async call<T>(operation: string, run: (callOptions: ConfigurationOptions) => Promise<T>, signal?: AbortSignal): Promise<T> {
      const timeout = AbortSignal.timeout(requestTimeoutMs);
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      try {
        return await run({ middleware: [middleware(combined)], middlewareMergeStrategy: 'append' });
      } catch (error) {
        throw wrap(operation, error, timeout.aborted, signal?.aborted === true);
      }
    },

    watch(path, query, onLine, signal, onOpen): Promise<void> {
      const operation = `watch ${path}`;
      return new Promise<void>((resolve, reject) => {
        let controller: AbortController | undefined;
        let finished = false;
        const finish = (error: unknown): void => {
          if (finished) {
            return;
          }
          finished = true;
          signal.removeEventListener('abort', onAbort);
          if (error && !signal.aborted) {
            reject(wrap(operation, error, false, false));
          } else {
            resolve();
          }
        };
        const onAbort = (): void => {
          controller?.abort();
          finish(null);
        };
        if (signal.aborted) {
          resolve();
          return;
        }
        signal.addEventListener('abort', onAbort, { once: true });
        watcher
          .watch(
            path,
            query,
            (type: string, object: unknown) => {
              if (!finished) {
                onLine(type, object);
              }
            },
            (error: unknown) => finish(error),
          )
          .then(
            (started) => {
              controller = started;
              if (finished) {
                started.abort();
              } else {
                onOpen?.();
              }
            },
            (error: unknown) => finish(error),
          );
      });
    },

    close(): void {
      agent.destroy();
    },
  };
}

/** Whether an error is the API's answer with this HTTP status code. */
export function isStatus(error: unknown, code: number): error is KubeApiError {
  return error instanceof KubeApiError && error.statusCode === code;
}
