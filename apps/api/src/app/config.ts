import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import proxyaddr from 'proxy-addr';
import { type ClusterAddressPolicy, parseAddressPolicy } from '@ccos/api/data-access-kube';

/** Everything the service reads from its environment. README.md documents each variable. */
export interface ApiConfig {
  readonly port: number;
  readonly host: string;
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
  /** How long after a node's kubelet started its CSRs may be auto-approved. */
  readonly csrApprovalWindowMinutes: number;
  /** Namespace (in each cluster) of the Lease the CSR auto-approver replicas compete for. */
  readonly csrApproverLeaseNamespace: string;
  /** The agent executable copied to hosts. */
  readonly agentBinary: string;
  /** Files hosts download during an install: imported release sets in `<dir>/sets/<version>`, the default set in `<dir>/{binary,rpm,unit}/<name>`. */
  readonly artifactsDir: string;
  /** Largest artifact set taken by POST /admin/artifact-sets (bytes). */
  readonly artifactUploadMaxBytes: number;
  /** The service's URL as hosts reach it (the agent reports there); null = derived from the request host. */
  readonly agentApiUrl: string | null;
  /** The operator's certificate and key (PEM files, reloaded on change); null = issue one from the service's own CA. */
  readonly tls: { readonly certFile: string; readonly keyFile: string; readonly caFile: string | null } | null;
  /** Agents may use plain HTTP (AGENT_PLAIN_HTTP=allow): their token and the answers then cross the network unprotected. */
  readonly agentPlainHttp: boolean;
  readonly sshPoolSize: number;
  /** Installs a batch runs at once unless its request says otherwise (never more than the SSH pool). */
  readonly batchConcurrency: number;
  readonly sshConnectTimeoutMs: number;
  /** An install whose agent is silent this long is STALLED. */
  readonly stallAfterSeconds: number;
  /** How long START_KUBELET waits for the Node to be Ready. */
  readonly nodeReadyTimeoutSeconds: number;
  /** An install run still running this long after it started is ended; its agent token and bootstrap identity end with it. */
  readonly installRunDeadlineMinutes: number;
  /** Namespace (in each cluster) of the per-run bootstrap identities (ServiceAccounts). */
  readonly bootstrapNamespace: string;
  /** Loopback, link-local and metadata ranges (or networks) the service may still connect to as a cluster's API server. */
  readonly clusterAddresses: ClusterAddressPolicy;
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
 * Reads the configuration. In embedded mode a missing SECRET_KEY is generated once and
 * kept in the data folder (0600); with a real database it must be given, because every
 * replica has to share it.
 */
export async function loadConfig(env: Environment = process.env): Promise<ApiConfig> {
  const dataDir = resolve(env['DATA_DIR'] ?? './.data');
  const databaseUrl = env['DATABASE_URL']?.trim() || null;
  let secretKey = env['SECRET_KEY']?.trim();
  if (!secretKey) {
    if (databaseUrl) {
      throw new Error('SECRET_KEY is required with DATABASE_URL (every replica must share it); generate one with `openssl rand -base64 32`');
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
  return {
    port: integer(env, 'PORT', 4000, 0, 65535),
    host: env['HOST'] ?? '0.0.0.0',
    databaseUrl,
    dataDir,
    secretKey,
    adminPassword: env['ADMIN_PASSWORD'] || undefined,
    logLevel: env['LOG_LEVEL'] ?? 'info',
    consoleDir: resolve(env['CONSOLE_DIR'] ?? 'dist/apps/console/browser'),
    graphiqlDir: resolve(env['GRAPHIQL_DIR'] ?? 'dist/apps/graphiql'),
    sessionTtlSeconds: integer(env, 'SESSION_TTL_SECONDS', 12 * 3600, 60, 30 * 24 * 3600),
    trustedProxies: trustedProxies(env['TRUSTED_PROXIES']),
    passwordChecksAtOnce: integer(env, 'PASSWORD_CHECKS_AT_ONCE', Math.min(4, availableParallelism()), 1, 64),
    maxRequestBytes: integer(env, 'MAX_REQUEST_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    csrApprovalWindowMinutes: integer(env, 'CSR_APPROVAL_WINDOW_MINUTES', 60, 1, 24 * 60),
    csrApproverLeaseNamespace: env['CSR_APPROVER_LEASE_NAMESPACE']?.trim() || 'kube-system',
    agentBinary: resolve(env['AGENT_BINARY'] ?? 'dist/apps/boot-worker/boot-worker'),
    artifactsDir: resolve(env['ARTIFACTS_DIR'] ?? join(dataDir, 'artifacts')),
    artifactUploadMaxBytes: integer(env, 'ARTIFACT_UPLOAD_MAX_BYTES', 16 * 1024 ** 3, 1024 * 1024, 256 * 1024 ** 3),
    agentApiUrl,
    tls: tlsFiles(env),
    agentPlainHttp,
    sshPoolSize: integer(env, 'SSH_POOL_SIZE', 10, 1, 200),
    batchConcurrency: integer(env, 'BATCH_CONCURRENCY', 10, 1, 50),
    sshConnectTimeoutMs: integer(env, 'SSH_CONNECT_TIMEOUT_MS', 10_000, 500, 120_000),
    stallAfterSeconds: integer(env, 'STALL_AFTER_SECONDS', 120, 5, 24 * 3600),
    nodeReadyTimeoutSeconds,
    installRunDeadlineMinutes,
    bootstrapNamespace: dnsLabel(env, 'BOOTSTRAP_NAMESPACE', 'ccos-scaler-bootstrap'),
    clusterAddresses: parseAddressPolicy(env['ALLOW_CLUSTER_ADDRESSES']),
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
