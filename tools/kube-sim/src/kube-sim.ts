import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Authenticator } from './auth';
import { bootstrapTokenSecret, type BootstrapTokenOptions } from './bootstrap-token';
import { CertificateAuthority, type KeyPairPem } from './certificate-authority';
import { CsrSigningController } from './csr-signing-controller';
import type { KubeObject } from './kube-object';
import { buildKubeconfig, type KubeconfigCredentials } from './kubeconfig';
import { ObjectApi } from './object-api';
import { NodeLifecycleController } from './node-lifecycle-controller';
import { PdbController } from './pdb-controller';
import { PodGcController } from './pod-gc-controller';
import type { ResourceDefinition } from './resource-definition';
import { RESOURCES } from './resource-registry';
import { INITIAL_NAMESPACES } from './resources/namespaces';
import { loadSeed, type SeedInput } from './seed';
import { ApiHandler } from './server';
import { ServiceAccountTokens, type ServiceAccountTokenOptions } from './service-account-tokens';
import { ObjectStore } from './store';
import { x509 } from './x509';
import { readTokenFile, type StaticToken } from './token-file';
import type { UserInfo } from './user-info';

/** Options of {@link startKubeSim}. */
export interface KubeSimOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Address to listen on (default 127.0.0.1); also put into the serving certificate. */
  host?: string;
  /** Serve plain HTTP instead of HTTPS (no client certificates then). */
  insecureHttp?: boolean;
  /** kube-apiserver static token file (`token,user,uid,"group1,group2"`). */
  tokenAuthFile?: string;
  /** Static tokens given directly, in addition to the file. */
  staticTokens?: StaticToken[];
  /** Bearer token of the admin user (`kube-sim-admin`, group system:masters); random when absent. */
  adminToken?: string;
  /**
   * Serve requests without credentials as system:anonymous instead of 401. Default: false over HTTPS;
   * over plain HTTP true unless a token file, static tokens or an admin token are given (kubectl never
   * sends credentials over plain HTTP, like the old insecure port of kube-apiserver).
   */
  anonymousAuth?: boolean;
  /** Objects to start with: multi-document YAML text or objects. */
  seed?: SeedInput;
  /** Keep the CA (ca.crt/ca.key) here so a restarted simulator has the same CA. */
  stateDir?: string;
  /** Write the admin kubeconfig to this file. */
  kubeconfigOut?: string;
  /** Extra DNS names or IPs for the serving certificate (a VIP, a forwarded address). */
  tlsSans?: string[];
  /** Events kept per resource for resuming watches (older resourceVersions get 410 Gone). Default 5000. */
  watchCacheSize?: number;
  /** Interval of watch BOOKMARK events when asked for. Default 60 s. */
  bookmarkIntervalMs?: number;
  /**
   * Seconds without a kubelet heartbeat (Ready lastHeartbeatTime or kube-node-lease Lease renewTime)
   * before a Node that has heartbeated turns Unknown and gets the unreachable taints. Default 50
   * (kube-controller-manager 1.32's --node-monitor-grace-period); 0 disables.
   */
  nodeMonitorGracePeriodSeconds?: number;
  /** Seconds after a Node's deletion before its pods are garbage-collected. Default 40; negative disables. */
  orphanedPodGcSeconds?: number;
  /** Answer aggregated discovery (apidiscovery.k8s.io/v2) when asked; default true. */
  aggregatedDiscovery?: boolean;
  /** Issuer, API audiences and clock of service-account tokens (TokenRequest). */
  serviceAccountTokens?: ServiceAccountTokenOptions;
  /** Receives one line per request and internal errors. */
  log?: (line: string) => void;
}

/** A running simulator. */
export interface KubeSim {
  /** `https://127.0.0.1:<port>` (or http). */
  url: string;
  host: string;
  port: number;
  /** Admin kubeconfig YAML (client certificate over HTTPS, admin token over HTTP). */
  kubeconfig: string;
  kubeconfigPath?: string;
  caCertPem: string;
  adminToken: string;
  /** The admin's client certificate (HTTPS only). */
  adminClientCert?: KeyPairPem;
  ca: CertificateAuthority;
  store: ObjectStore;
  api: ObjectApi;
  /** Looks up a served resource by plural name (`pods`, `certificatesigningrequests`, ...). */
  resource(name: string): ResourceDefinition;
  /** Creates a bootstrap token Secret through the API and returns the `<id>.<secret>` bearer token. */
  createBootstrapToken(options?: BootstrapTokenOptions): string;
  /** A TokenRequest for an existing ServiceAccount (what `kubectl create token` does); returns the bearer token. */
  requestServiceAccountToken(namespace: string, name: string, spec?: { expirationSeconds?: number; audiences?: string[] }): string;
  /** Issues a client certificate from the simulator's CA (CN = user, O = groups). */
  issueClientCertificate(username: string, groups?: string[]): Promise<KeyPairPem>;
  /** A kubeconfig for this server with other credentials. */
  kubeconfigFor(credentials: KubeconfigCredentials, userName?: string): string;
  /** Resolves once every approved CSR being signed has its certificate or Failed condition. */
  signingIdle(): Promise<void>;
  stop(): Promise<void>;
}

const ADMIN: UserInfo = { username: 'kube-sim-admin', groups: ['system:masters', 'system:authenticated'] };

function servingSans(host: string, extra: readonly string[]): x509.JsonGeneralNames {
  const names = new Set(['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']);
  const ips = new Set(['127.0.0.1', '::1']);
  const add = (value: string): void => {
    if (isIP(value)) {
      ips.add(value);
    } else if (value) {
      names.add(value);
    }
  };
  if (host === '0.0.0.0' || host === '::') {
    for (const addrs of Object.values(networkInterfaces())) {
      for (const addr of addrs ?? []) {
        ips.add(addr.address.replace(/%.*$/, ''));
      }
    }
  } else {
    add(host);
  }
  extra.forEach(add);
  return [...[...names].map((value) => ({ type: 'dns' as const, value })), ...[...ips].map((value) => ({ type: 'ip' as const, value }))];
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') {
    return '127.0.0.1';
  }
  if (host === '::') {
    return '[::1]';
  }
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * Starts a Kubernetes API simulator in this process: HTTPS with its own CA (or plain HTTP),
 * client-certificate, bootstrap-token, service-account-token and static-token authentication, the resources of
 * RESOURCES with watch, eviction with PodDisruptionBudgets and a CSR signer.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/
 */
export async function startKubeSim(options: KubeSimOptions = {}): Promise<KubeSim> {
  const host = options.host ?? '127.0.0.1';
  const store = new ObjectStore(RESOURCES, { historySize: options.watchCacheSize });
  const api = new ObjectApi(store);
  const resource = (name: string): ResourceDefinition => {
    const def = store.definitions.find((d) => d.resource === name);
    if (!def) {
      throw new Error(`resource ${name} is not served`);
    }
    return def;
  };
  for (const name of INITIAL_NAMESPACES) {
    api.seed(resource('namespaces'), { metadata: { name } });
  }
  const ca = options.stateDir ? await CertificateAuthority.loadOrCreate(options.stateDir) : await CertificateAuthority.create();
  const adminToken = options.adminToken ?? randomBytes(24).toString('hex');
  const staticTokens = [...(options.tokenAuthFile ? await readTokenFile(options.tokenAuthFile) : []), ...(options.staticTokens ?? [])];
  const serviceAccountTokens = new ServiceAccountTokens(store, resource('serviceaccounts'), options.serviceAccountTokens);
  const authenticator = new Authenticator({ store, staticTokens, adminToken, serviceAccountTokens });
  const pdbController = new PdbController(store);
  const signer = new CsrSigningController(store, ca);
  const podGc = (options.orphanedPodGcSeconds ?? 40) >= 0 ? new PodGcController(api, (options.orphanedPodGcSeconds ?? 40) * 1000) : undefined;
  const nodeGrace = options.nodeMonitorGracePeriodSeconds ?? 50;
  const nodeLifecycle = nodeGrace > 0 ? new NodeLifecycleController(store, nodeGrace * 1000) : undefined;
  if (options.seed !== undefined) {
    loadSeed(api, options.seed);
  }

  let address = `${host}:${options.port ?? 0}`;
  const handler = new ApiHandler({
    api,
    authenticator,
    allowAnonymous:
      options.anonymousAuth ??
      (options.insecureHttp === true && !options.tokenAuthFile && (options.staticTokens ?? []).length === 0 && options.adminToken === undefined),
    serverAddress: () => address,
    aggregatedDiscovery: options.aggregatedDiscovery ?? true,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    tokenRequests: serviceAccountTokens,
    log: options.log,
  });
  let server: Server;
  let adminClientCert: KeyPairPem | undefined;
  if (options.insecureHttp) {
    server = createHttpServer(handler.handle);
  } else {
    const serving = await ca.issueKeyPair('CN=kube-apiserver', { sans: servingSans(host, options.tlsSans ?? []), server: true });
    adminClientCert = await ca.issueKeyPair('CN=kube-sim-admin, O=system:masters', { client: true });
    server = createHttpsServer({ key: serving.keyPem, cert: serving.certPem, ca: [ca.certPem], requestCert: true, rejectUnauthorized: false }, handler.handle);
  }
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : (options.port ?? 0);
  address = `${urlHost(host).replace(/^\[|\]$/g, '')}:${port}`;
  const url = `${options.insecureHttp ? 'http' : 'https'}://${urlHost(host)}:${port}`;
  const kubeconfigFor = (credentials: KubeconfigCredentials, userName?: string): string =>
    buildKubeconfig({ server: url, caCertPem: options.insecureHttp ? undefined : ca.certPem, credentials, userName });
  const kubeconfig = kubeconfigFor(adminClientCert ?? { token: adminToken });
  if (options.kubeconfigOut) {
    await writeFile(options.kubeconfigOut, kubeconfig, { mode: 0o600 });
  }

  let stopped = false;
  return {
    url,
    host,
    port,
    kubeconfig,
    kubeconfigPath: options.kubeconfigOut,
    caCertPem: ca.certPem,
    adminToken,
    adminClientCert,
    ca,
    store,
    api,
    resource,
    createBootstrapToken(tokenOptions?: BootstrapTokenOptions): string {
      const { token, secret } = bootstrapTokenSecret(tokenOptions);
      api.create(resource('secrets'), 'kube-system', secret as KubeObject, { user: ADMIN });
      return token;
    },
    requestServiceAccountToken(namespace: string, name: string, spec = {}): string {
      const answer = serviceAccountTokens.request(namespace, name, { spec });
      return String((answer['status'] as { token: string }).token);
    },
    issueClientCertificate(username: string, groups: string[] = []): Promise<KeyPairPem> {
      const subject = new x509.Name([{ CN: [username] }, ...groups.map((g) => ({ O: [g] }))]);
      return ca.issueKeyPair(subject, { client: true });
    },
    kubeconfigFor,
    signingIdle: () => signer.idle(),
    async stop(): Promise<void> {
      if (stopped) {
        return;
      }
      stopped = true;
      handler.closeWatches();
      signer.stop();
      pdbController.stop();
      podGc?.stop();
      nodeLifecycle?.stop();
      api.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
