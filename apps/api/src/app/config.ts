import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import proxyaddr from 'proxy-addr';
import { type ClusterAddressPolicy, parseAddressPolicy } from '@ccos/api/data-access-kube';
import { DEFAULT_MAX_PENDING_CSRS } from '@ccos/api/feature-csrs';
import { parseAllowedNodeRoles } from '@ccos/shared/domain';
import { DEFAULT_WEBSOCKET_LIMITS, type WebSocketLimits } from './websocket-admission';

/**
 * What one process of the service does (SERVICE_ROLE). `all`: everything (the default, and the only
 * role on the embedded database). `api`: GraphQL, subscriptions, the console, the agent channel and
 * the orchestration not yet on the job engine; it queues jobs but runs none. `worker`: the durable
 * jobs (a host's checks and agent copy, starting install agents, health checks, inspections,
 * remediation), with health, readiness and metrics on PORT and nothing else.
 */
export type ServiceRole = 'all' | 'api' | 'worker';
export const SERVICE_ROLES: readonly ServiceRole[] = ['all', 'api', 'worker'];

/** Everything the service reads from its environment. README.md documents each variable. */
export interface ApiConfig {
  readonly role: ServiceRole;
  readonly port: number;
  readonly host: string;
  /**
   * The agents' own listener (AGENT_PORT, on HOST): it answers only what agents use, and agents
   * are given a URL on it. null: agents use PORT, like everyone else.
   */
  readonly agentPort: number | null;
  /** /metrics on an internal listener of its own (METRICS_PORT on METRICS_HOST); null: /metrics on PORT. */
  readonly metricsListener: { readonly port: number; readonly host: string } | null;
  /** A real Postgres server, or null for the embedded database in `dataDir`. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly secretKey: string;
  readonly adminPassword: string | undefined;
  readonly logLevel: string;
  readonly consoleDir: string;
  /** The built GraphQL IDE served at GET /graphql to browsers. */
  readonly graphiqlDir: string;
  readonly sessionTtlSeconds: number;
  /** Peers whose X-Forwarded-For is believed (addresses, CIDR ranges, or loopback/linklocal/uniquelocal); empty: none. */
  readonly trustedProxies: readonly string[];
  /** Password checks (64 MiB scrypt each) one process runs at once. */
  readonly passwordChecksAtOnce: number;
  readonly maxRequestBytes: number;
  /** Largest request body without a signed-in session (anonymous requests, agents). */
  readonly maxAnonymousRequestBytes: number;
  /** graphql-ws connections per session, user and process, and subscriptions per connection. */
  readonly webSocketLimits: WebSocketLimits;
  /** How long after a node's kubelet started its CSRs may be auto-approved. */
  readonly csrApprovalWindowMinutes: number;
  /** Namespace (in each cluster) of the Lease the CSR auto-approver replicas compete for. */
  readonly csrApproverLeaseNamespace: string;
  /** The auto-approver approves nothing while more CSRs than this are pending in a cluster. */
  readonly csrApproverMaxPending: number;
  /** The agent executable copied to hosts. */
  readonly agentBinary: string;
  /** Files hosts download during an install: imported release sets in `<dir>/sets/<version>`, the default set in `<dir>/{binary,rpm,unit}/<name>`. */
  readonly artifactsDir: string;
  /** Largest artifact set taken by POST /admin/artifact-sets (bytes). */
  readonly artifactUploadMaxBytes: number;
  /** The service's URL as hosts reach it (the agent reports there); null = derived from the request host. */
  readonly agentApiUrl: string | null;
  /** A simulated fleet's agent launcher on loopback (AGENT_LAUNCHER_URL, benchmarks and tests): runs' agents start there, not over SSH. */
  readonly agentLauncherUrl: string | null;
  /** The operator's certificate and key (PEM files, reloaded on change); null = issue one from the service's own CA. */
  readonly tls: { readonly certFile: string; readonly keyFile: string; readonly caFile: string | null } | null;
  /** Agents may use plain HTTP (AGENT_PLAIN_HTTP=allow): their token and the answers then cross the network unprotected. */
  readonly agentPlainHttp: boolean;
  readonly sshPoolSize: number;
  /** Durable jobs (a host's provisioning, …) this process runs at once. */
  readonly jobConcurrency: number;
  /** Attempts a job gets (retried with exponential backoff) before it is left failed for an ADMIN to retry. */
  readonly jobMaxAttempts: number;
  /** Jobs that mostly wait (removals, a rollout's node) this process runs at once, besides JOB_CONCURRENCY. */
  readonly jobLongConcurrency: number;
  /** How often every member node's host is checked over SSH (reachable, the kubelet unit active). */
  readonly healthCheckIntervalSeconds: number;
  /** How long a removal waits for a host that does not answer over SSH before it fails (REMOVAL_HOST_WAIT_SECONDS). */
  readonly removalHostWaitSeconds: number;
  /** How long a CSR is pending before the cluster's webhooks get a `csr.pending` event (WEBHOOK_CSR_PENDING_SECONDS). */
  readonly webhookCsrPendingSeconds: number;
  /** How long a held action (four-eyes) waits for a second person before it expires (APPROVAL_TTL_SECONDS). */
  readonly approvalTtlSeconds: number;
  /** How often each cluster with a remediation policy on is evaluated. */
  readonly remediationIntervalSeconds: number;
  /** How often every joined node's host is inspected for drift (HOST_INSPECTION_INTERVAL_SECONDS; 0 = only when asked). */
  readonly hostInspectionIntervalSeconds: number;
  /** How often every running rollout is looked at again (ROLLOUT_INTERVAL_SECONDS). */
  readonly rolloutIntervalSeconds: number;
  /** Alertmanager's URL (ALERTMANAGER_URL), asked by rollouts that pause while named alerts fire; null: none. */
  readonly alertmanagerUrl: string | null;
  /** Installs a batch runs at once unless its request says otherwise (never more than the SSH pool). */
  readonly batchConcurrency: number;
  readonly sshConnectTimeoutMs: number;
  /** An install whose agent is silent this long is STALLED. */
  readonly stallAfterSeconds: number;
  /** How long START_KUBELET waits for the Node to be Ready. */
  readonly nodeReadyTimeoutSeconds: number;
  /** An install run still running this long after it started is ended; its agent token and bootstrap identity end with it. */
  readonly installRunDeadlineMinutes: number;
  /** PROGRESS events one install run may store, and their bytes (message, coded message, detail); the events that finish steps have a reserve beyond both. */
  readonly installRunMaxEvents: number;
  readonly installRunMaxEventBytes: number;
  /** Namespace (in each cluster) of the per-run bootstrap identities (ServiceAccounts). */
  readonly bootstrapNamespace: string;
  /** Loopback, link-local and metadata ranges (or networks) the service may still connect to as a cluster's API server. */
  readonly clusterAddresses: ClusterAddressPolicy;
  /** Node roles an OPERATOR may give besides worker (ALLOW_NODE_ROLES); master and control-plane never. */
  readonly allowedNodeRoles: readonly string[];
  /**
   * cluster-autoscaler's externalgrpc provider (AUTOSCALER_GRPC_PORT; off when unset): where it
   * listens and the address autoscalers dial (AUTOSCALER_GRPC_ADDRESS, host:port; its host goes
   * into the server certificate).
   */
  readonly autoscalerGrpc: { readonly port: number; readonly host: string; readonly address: string | null } | null;
  /** A folder on each host where agents write CPU profiles (AGENT_CPU_PROFILE_DIR; off when unset): for measuring, not for production. */
  readonly agentCpuProfileDir: string | null;
  /** Preflight thresholds handed to the agent. */
  readonly hostRequirements: { readonly minKernel: string; readonly minMemoryBytes: number; readonly minCpus: number; readonly maxClockSkewSeconds: number };
}

export type Environment = Record<string, string | undefined>;

/**
 * The variables that carry secrets. Each may come as a file instead (`<NAME>_FILE`, e.g. a mounted
 * Secret), so that the secret is not in the environment every child process inherits.
 */
export const SECRET_VARIABLES = ['DATABASE_URL', 'SECRET_KEY', 'ADMIN_PASSWORD'] as const;
type SecretVariable = (typeof SECRET_VARIABLES)[number];

/**
 * Reads the configuration. In embedded mode a missing SECRET_KEY is generated once and
 * kept in the data folder (0600); with a real database it must be given, because every
 * replica has to share it.
 */
export async function loadConfig(env: Environment = process.env): Promise<ApiConfig> {
  const dataDir = resolve(env['DATA_DIR'] ?? './.data');
  const secret = await secretVariables(env);
  const databaseUrl = secret.DATABASE_URL?.trim() || null;
  let secretKey = secret.SECRET_KEY?.trim();
  if (!secretKey) {
    if (databaseUrl) {
      throw new Error('SECRET_KEY (or SECRET_KEY_FILE) is required with DATABASE_URL (every replica must share it); generate one with `openssl rand -base64 32`');
    }
    secretKey = await embeddedSecretKey(dataDir);
  }
  const agentPlainHttp = plainHttpSetting(env['AGENT_PLAIN_HTTP']);
  const agentApiUrl = parseAgentApiUrl(env['AGENT_API_URL']);
  if (agentApiUrl?.startsWith('http:') && !agentPlainHttp) {
    throw new Error(
      `AGENT_API_URL=${agentApiUrl} is plain HTTP: hosts would send their run token in clear and could be handed forged artifacts. Use https:// (the service serves TLS on PORT), or set AGENT_PLAIN_HTTP=allow to accept the risk`,
    );
  }
  const nodeReadyTimeoutSeconds = integer(env, 'NODE_READY_TIMEOUT_SECONDS', 1800, 10, 24 * 3600);
  const installRunDeadlineMinutes = integer(env, 'INSTALL_RUN_DEADLINE_MINUTES', 120, 1, 7 * 24 * 60);
  if (installRunDeadlineMinutes * 60 <= nodeReadyTimeoutSeconds) {
    throw new Error(
      `INSTALL_RUN_DEADLINE_MINUTES=${installRunDeadlineMinutes} ends every run before START_KUBELET could wait its NODE_READY_TIMEOUT_SECONDS=${nodeReadyTimeoutSeconds}; make the deadline longer`,
    );
  }
  const role = serviceRole(env['SERVICE_ROLE'], databaseUrl);
  if (role === 'worker' && agentApiUrl === null) {
    // Without it the agent's URL is derived from this process's own port, which serves only probes on a worker.
    throw new Error('SERVICE_ROLE=worker starts agents but does not serve them: set AGENT_API_URL to the address hosts reach the API processes (or their agents\' listener) at, e.g. https://10.0.0.5:4443');
  }
  const port = integer(env, 'PORT', 4000, 0, 65535);
  const host = env['HOST'] ?? '0.0.0.0';
  const { agentPort, metricsListener } = ownListeners(env, port, host);
  const maxRequestBytes = integer(env, 'MAX_REQUEST_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024);
  return {
    role,
    port,
    host,
    agentPort,
    metricsListener,
    databaseUrl,
    dataDir,
    secretKey,
    adminPassword: secret.ADMIN_PASSWORD || undefined,
    logLevel: env['LOG_LEVEL'] ?? 'info',
    consoleDir: resolve(env['CONSOLE_DIR'] ?? 'dist/apps/console/browser'),
    graphiqlDir: resolve(env['GRAPHIQL_DIR'] ?? 'dist/apps/graphiql'),
    sessionTtlSeconds: integer(env, 'SESSION_TTL_SECONDS', 12 * 3600, 60, 30 * 24 * 3600),
    trustedProxies: trustedProxies(env['TRUSTED_PROXIES']),
    passwordChecksAtOnce: integer(env, 'PASSWORD_CHECKS_AT_ONCE', Math.min(4, availableParallelism()), 1, 64),
    maxRequestBytes,
    // Never above the general limit, on the main port and the agents' listener alike.
    maxAnonymousRequestBytes: Math.min(integer(env, 'MAX_ANONYMOUS_REQUEST_BYTES', 64 * 1024, 1024, 64 * 1024 * 1024), maxRequestBytes),
    webSocketLimits: {
      connectionsPerSession: integer(env, 'WS_CONNECTIONS_PER_SESSION', DEFAULT_WEBSOCKET_LIMITS.connectionsPerSession, 1, 1000),
      connectionsPerUser: integer(env, 'WS_CONNECTIONS_PER_USER', DEFAULT_WEBSOCKET_LIMITS.connectionsPerUser, 1, 10_000),
      connectionsPerProcess: integer(env, 'WS_CONNECTIONS_PER_PROCESS', DEFAULT_WEBSOCKET_LIMITS.connectionsPerProcess, 1, 100_000),
      subscriptionsPerConnection: integer(env, 'WS_SUBSCRIPTIONS_PER_CONNECTION', DEFAULT_WEBSOCKET_LIMITS.subscriptionsPerConnection, 1, 1000),
    },
    csrApprovalWindowMinutes: integer(env, 'CSR_APPROVAL_WINDOW_MINUTES', 60, 1, 24 * 60),
    csrApproverLeaseNamespace: env['CSR_APPROVER_LEASE_NAMESPACE']?.trim() || 'kube-system',
    csrApproverMaxPending: integer(env, 'CSR_APPROVER_MAX_PENDING', DEFAULT_MAX_PENDING_CSRS, 1, 100_000),
    agentBinary: resolve(env['AGENT_BINARY'] ?? 'dist/apps/boot-worker/boot-worker'),
    artifactsDir: resolve(env['ARTIFACTS_DIR'] ?? join(dataDir, 'artifacts')),
    artifactUploadMaxBytes: integer(env, 'ARTIFACT_UPLOAD_MAX_BYTES', 16 * 1024 ** 3, 1024 * 1024, 256 * 1024 ** 3),
    agentApiUrl,
    agentLauncherUrl: parseAgentLauncherUrl(env['AGENT_LAUNCHER_URL']),
    tls: tlsFiles(env),
    agentPlainHttp,
    sshPoolSize: integer(env, 'SSH_POOL_SIZE', 10, 1, 200),
    jobConcurrency: integer(env, 'JOB_CONCURRENCY', 10, 1, 200),
    jobMaxAttempts: integer(env, 'JOB_MAX_ATTEMPTS', 5, 1, 25),
    jobLongConcurrency: integer(env, 'JOB_LONG_CONCURRENCY', 50, 1, 1000),
    healthCheckIntervalSeconds: integer(env, 'HEALTH_CHECK_INTERVAL_SECONDS', 300, 5, 24 * 3600),
    removalHostWaitSeconds: integer(env, 'REMOVAL_HOST_WAIT_SECONDS', 600, 10, 24 * 3600),
    webhookCsrPendingSeconds: integer(env, 'WEBHOOK_CSR_PENDING_SECONDS', 600, 1, 7 * 24 * 3600),
    approvalTtlSeconds: integer(env, 'APPROVAL_TTL_SECONDS', 3600, 1, 7 * 24 * 3600),
    remediationIntervalSeconds: integer(env, 'REMEDIATION_INTERVAL_SECONDS', 30, 1, 3600),
    hostInspectionIntervalSeconds: integer(env, 'HOST_INSPECTION_INTERVAL_SECONDS', 6 * 3600, 0, 7 * 24 * 3600),
    rolloutIntervalSeconds: integer(env, 'ROLLOUT_INTERVAL_SECONDS', 15, 1, 3600),
    alertmanagerUrl: alertmanagerUrl(env['ALERTMANAGER_URL']),
    batchConcurrency: integer(env, 'BATCH_CONCURRENCY', 10, 1, 50),
    sshConnectTimeoutMs: integer(env, 'SSH_CONNECT_TIMEOUT_MS', 10_000, 500, 120_000),
    stallAfterSeconds: integer(env, 'STALL_AFTER_SECONDS', 120, 5, 24 * 3600),
    nodeReadyTimeoutSeconds,
    installRunDeadlineMinutes,
    installRunMaxEvents: integer(env, 'INSTALL_RUN_MAX_EVENTS', 2_000, 100, 1_000_000),
    installRunMaxEventBytes: integer(env, 'INSTALL_RUN_MAX_EVENT_BYTES', 4 * 1024 * 1024, 64 * 1024, 1024 ** 3),
    bootstrapNamespace: dnsLabel(env, 'BOOTSTRAP_NAMESPACE', 'ccos-scaler-bootstrap'),
    clusterAddresses: parseAddressPolicy(env['ALLOW_CLUSTER_ADDRESSES']),
    allowedNodeRoles: parseAllowedNodeRoles(env['ALLOW_NODE_ROLES']),
    autoscalerGrpc: autoscalerGrpcSetting(env),
    agentCpuProfileDir: env['AGENT_CPU_PROFILE_DIR']?.trim() || null,
    hostRequirements: {
      minKernel: env['MIN_KERNEL'] ?? '4.18',
      minMemoryBytes: integer(env, 'MIN_MEMORY_MB', 2048, 1, 1024 * 1024) * 1024 * 1024,
      minCpus: integer(env, 'MIN_CPUS', 2, 1, 1024),
      maxClockSkewSeconds: integer(env, 'MAX_CLOCK_SKEW_SECONDS', 5, 1, 3600),
    },
  };
}

/**
 * Each secret from its variable or from the file its `_FILE` variable names (read now, at start;
 * line breaks at the end of the file are not part of it). Giving both is refused, as is a file
 * that cannot be read: a service that silently used the other value, or none, would start with
 * the wrong database or key. An empty variable counts as not given.
 */
async function secretVariables(env: Environment): Promise<Partial<Record<SecretVariable, string>>> {
  const values: Partial<Record<SecretVariable, string>> = {};
  for (const name of SECRET_VARIABLES) {
    const file = env[`${name}_FILE`]?.trim() || null;
    const plain = env[name] || null;
    if (file !== null && plain !== null) {
      throw new Error(`${name} and ${name}_FILE are both set: give the secret one way only (${name}_FILE, a file such as a mounted Secret, keeps it out of the environment)`);
    }
    if (file === null) {
      values[name] = plain ?? undefined;
      continue;
    }
    try {
      values[name] = (await readFile(resolve(file), 'utf8')).replace(/[\r\n]+$/, '');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new Error(`${name}_FILE=${file} cannot be read (${code}): the service needs ${name} from that file; check that it exists and that the service's user may read it`, { cause: error });
    }
  }
  return values;
}

/**
 * Removes the secret variables given in plain form from `env` once they are read, so that no child
 * process the service starts (zstd for the agent's copy, …) inherits them.
 */
export function forgetSecretVariables(env: Environment = process.env): void {
  for (const name of SECRET_VARIABLES) {
    delete env[name];
  }
}

/** AGENT_PORT and METRICS_PORT (unset: off, their traffic stays on PORT); each must differ from PORT and from each other. */
function ownListeners(env: Environment, port: number, host: string): Pick<ApiConfig, 'agentPort' | 'metricsListener'> {
  const agentPort = env['AGENT_PORT']?.trim() ? integer(env, 'AGENT_PORT', 0, 0, 65535) : null;
  const metricsPort = env['METRICS_PORT']?.trim() ? integer(env, 'METRICS_PORT', 0, 0, 65535) : null;
  if (metricsPort === null && env['METRICS_HOST']?.trim()) {
    throw new Error('METRICS_HOST is where the metrics listener listens: set METRICS_PORT too (without it /metrics is served on PORT)');
  }
  const named: Array<[string, number | null]> = [['PORT', port], ['AGENT_PORT', agentPort], ['METRICS_PORT', metricsPort]];
  for (const [index, [name, value]] of named.entries()) {
    const clash = named.slice(index + 1).find(([, other]) => value !== null && value !== 0 && other === value);
    if (clash) {
      throw new Error(`${name} and ${clash[0]} are both ${value}: each listener needs a port of its own`);
    }
  }
  return {
    agentPort,
    metricsListener: metricsPort === null ? null : { port: metricsPort, host: env['METRICS_HOST']?.trim() || host },
  };
}

async function embeddedSecretKey(dataDir: string): Promise<string> {
  const file = join(dataDir, 'secret.key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw error;
    }
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64');
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return key;
}

function serviceRole(raw: string | undefined, databaseUrl: string | null): ServiceRole {
  const role = raw?.trim().toLowerCase() || 'all';
  if (!SERVICE_ROLES.includes(role as ServiceRole)) {
    throw new Error(`SERVICE_ROLE=${raw} is not a role of the service: one of ${SERVICE_ROLES.join(', ')} (all: everything in one process)`);
  }
  if (role !== 'all' && !databaseUrl) {
    throw new Error(`SERVICE_ROLE=${role} splits the service into processes that share a Postgres server: set DATABASE_URL (the embedded database serves one process, SERVICE_ROLE=all)`);
  }
  return role as ServiceRole;
}

function autoscalerGrpcSetting(env: Environment): ApiConfig['autoscalerGrpc'] {
  if (!env['AUTOSCALER_GRPC_PORT']?.trim()) {
    if (env['AUTOSCALER_GRPC_ADDRESS']?.trim()) {
      throw new Error('AUTOSCALER_GRPC_ADDRESS is the address of the externalgrpc provider: set AUTOSCALER_GRPC_PORT too (the provider is off without it)');
    }
    return null;
  }
  const port = integer(env, 'AUTOSCALER_GRPC_PORT', 0, 0, 65535);
  const address = env['AUTOSCALER_GRPC_ADDRESS']?.trim() || null;
  if (address !== null && !/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(address)) {
    throw new Error(`AUTOSCALER_GRPC_ADDRESS=${address} is not host:port (the address cluster-autoscaler dials, e.g. ccos-scaler.ccos-scaler.svc:4443)`);
  }
  return { port, host: env['AUTOSCALER_GRPC_HOST']?.trim() || env['HOST'] || '0.0.0.0', address };
}

function parseAgentApiUrl(raw: string | undefined): string | null {
  if (!raw) {
    return null;
  }
  if (!/^https?:\/\/[^\s/]+(:\d+)?\/?$/.test(raw)) {
    throw new Error(`AGENT_API_URL=${raw} is not a URL such as https://10.0.0.5:4000 (the address hosts reach the service at)`);
  }
  return raw.replace(/\/$/, '');
}

/** Loopback only: the launcher is handed every run's agent token. */
function parseAgentLauncherUrl(raw: string | undefined): string | null {
  const value = raw?.trim();
  if (!value) {
    return null;
  }
  if (!/^http:\/\/(127\.0\.0\.1|\[::1\]|localhost):\d{1,5}\/?$/.test(value)) {
    throw new Error(`AGENT_LAUNCHER_URL=${value} must be http://127.0.0.1:<port>: the launcher of a simulated fleet runs on this machine and is handed every run's agent token`);
  }
  return value.replace(/\/$/, '');
}

function alertmanagerUrl(raw: string | undefined): string | null {
  if (!raw) {
    return null;
  }
  if (!/^https?:\/\/[^/\s]+/.test(raw) || !URL.canParse(raw)) {
    throw new Error(`ALERTMANAGER_URL=${raw} is not a URL such as http://alertmanager.monitoring:9093`);
  }
  return raw;
}

function dnsLabel(env: Environment, name: string, fallback: string): string {
  const value = env[name]?.trim() || fallback;
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)) {
    throw new Error(`${name}=${value} is not a Kubernetes namespace name (lower-case letters, digits and '-', at most 63)`);
  }
  return value;
}

function trustedProxies(raw: string | undefined): string[] {
  const entries = (raw ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
  try {
    proxyaddr.compile(entries);
  } catch (error) {
    throw new Error(`TRUSTED_PROXIES=${raw} is not a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal: ${(error as Error).message}`);
  }
  return entries;
}

function plainHttpSetting(raw: string | undefined): boolean {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'refuse') {
    return false;
  }
  if (value === 'allow') {
    return true;
  }
  throw new Error(`AGENT_PLAIN_HTTP=${raw} is not "allow" or "refuse"`);
}

function tlsFiles(env: Environment): ApiConfig['tls'] {
  const certFile = env['TLS_CERT_FILE']?.trim() || null;
  const keyFile = env['TLS_KEY_FILE']?.trim() || null;
  const caFile = env['TLS_CA_FILE']?.trim() || null;
  if (certFile === null && keyFile === null) {
    if (caFile !== null) {
      throw new Error('TLS_CA_FILE names the CA of TLS_CERT_FILE: set TLS_CERT_FILE and TLS_KEY_FILE too (without them the service issues its own certificate)');
    }
    return null;
  }
  if (certFile === null || keyFile === null) {
    throw new Error(`TLS_CERT_FILE and TLS_KEY_FILE go together (${certFile === null ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE'} is missing)`);
  }
  return { certFile: resolve(certFile), keyFile: resolve(keyFile), caFile: caFile === null ? null : resolve(caFile) };
}

function integer(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name}=${raw} is not an integer between ${min} and ${max}`);
  }
  return value;
}
