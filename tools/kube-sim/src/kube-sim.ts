import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type Server as NetServer, type Socket as NetSocket, createServer as createNetServer, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Authenticator } from './auth';
import { Authorizer } from './authorization/authorizer';
import { defaultClusterRoleBindings, defaultClusterRoles, kubeadmBootstrapPolicy } from './authorization/bootstrap-policy';
import { certificateAdmission } from './authorization/certificate-admission';
import { ClusterRoleAggregationController } from './authorization/cluster-role-aggregation';
import { nodeRestriction } from './authorization/node-restriction';
import { rbacEscalationPrevention } from './authorization/rbac-escalation';
import { bootstrapTokenSecret, type BootstrapTokenOptions } from './bootstrap-token';
import { CertificateAuthority, type KeyPairPem } from './certificate-authority';
import { SYSTEM_CLOCK, type KubeSimClock } from './clock';
import { CrdController } from './crd-controller';
import { CsrSigningController } from './csr-signing-controller';
import { createIdentity, type Identity, type IdentityOptions } from './identity';
import type { KubeObject } from './kube-object';
import { buildKubeconfig, type KubeconfigCredentials } from './kubeconfig';
import { NodeLifecycleController } from './node-lifecycle-controller';
import { ObjectApi } from './object-api';
import { PdbController } from './pdb-controller';
import { PodGcController } from './pod-gc-controller';
import type { ResourceDefinition } from './resource-definition';
import { RESOURCES, resourceForKind } from './resource-registry';
import { INITIAL_NAMESPACES } from './resources/namespaces';
import { Scheduler } from './scheduler';
import { loadSeed, type SeedInput } from './seed';
import { ApiHandler } from './server';
import { ServiceAccountTokens, type ServiceAccountTokenOptions } from './service-account-tokens';
import { LegacyServiceAccountTokens, ServiceAccountsController } from './service-accounts';
import { ObjectStore, type WatchCacheOptions } from './store';
import { readTokenFile, type StaticToken } from './token-file';
import { ANONYMOUS_USER, type UserInfo } from './user-info';
import { DeploymentController, PodStarter, ReplicaSetController } from './workload-controllers';
import { x509 } from './x509';

/** Options of {@link startKubeSim}. */
export interface KubeSimOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /**
   * A kube-sim stopped with `holdPort` whose port this one takes over, as an API server restarted
   * on its host: the held port is let go only just before this one listens on it.
   */
  replacing?: KubeSim;
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
   * Serve the all-powerful admin (`kube-sim-admin` in system:masters: its client certificate and
   * token). Default true. With false no credential of kube-sim's grants system:masters (tests still
   * set the cluster up in-process through `api`), and `kubeconfig` is `identity`'s, or has no user.
   */
  admin?: boolean;
  /**
   * Create this identity (bound to its ClusterRoles and Roles) at start and make `kubeconfig` (and
   * `kubeconfigOut`) its kubeconfig instead of the admin's, which stays in `adminKubeconfig`.
   */
  identity?: IdentityOptions;
  /** Write the admin kubeconfig here (when `kubeconfigOut` holds the identity's). */
  adminKubeconfigOut?: string;
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
  /**
   * A fixed watch cache of this many events per resource. By default the cache adapts as the API
   * server's does (`watchCache`): older resourceVersions are 410 Gone for watches.
   */
  watchCacheSize?: number;
  /** The adaptive watch cache: 100 to 102400 events per resource, growing while its oldest event is younger than 75 s. */
  watchCache?: WatchCacheOptions;
  /**
   * Interval of etcd compaction (default 5 minutes, kube-apiserver's --etcd-compaction-interval):
   * each compacts history to the resourceVersion of the previous one, after which continue tokens
   * and `resourceVersionMatch=Exact` lists that old are 410. 0 disables; `compact()` compacts now.
   */
  compactionIntervalMs?: number;
  /** The server's --min-request-timeout: watches without timeoutSeconds end after this × rand[1, 2) seconds. Default 1800. */
  minRequestTimeoutSeconds?: number;
  /** How long a list or watch at a resourceVersion not reached yet waits before its 504. Default 3000. */
  tooLargeResourceVersionWaitMs?: number;
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
  /**
   * Add what `kubeadm init` binds for node bootstrap tokens (CSR creation for
   * system:bootstrappers:kubeadm:default-node-token, the nodeclient/selfnodeclient bindings). Default true.
   */
  kubeadmBootstrapPolicy?: boolean;
  /**
   * Run the ReplicaSet and Deployment controllers and the scheduler: deleted or evicted pods of a
   * ReplicaSet are replaced, pods without a node are bound to one that fits. Default false, because
   * tests that compare two clusters pod by pod (the replacements get random names) and seeds whose
   * ReplicaSets do not match their pods would change; see the README.
   */
  workloadControllers?: boolean;
  /** How long controllers (workload, scheduler, disruption) wait after a change before acting. Default 0 (the next turn of the event loop). */
  controllerDelayMs?: number;
  /** The disruption controller's delay alone (default `controllerDelayMs`): until it acts, a changed budget's observedGeneration lags. */
  pdbSyncDelayMs?: number;
  /**
   * Stand in for kubelets: a pod bound to a Ready node after start becomes Running and Ready this
   * many seconds later. Off by default (pods stay as written, as with no kubelet).
   */
  podStartupSeconds?: number;
  /** Answer aggregated discovery (apidiscovery.k8s.io/v2) when asked; default true. */
  aggregatedDiscovery?: boolean;
  /** Issuer, API audiences and clock of service-account tokens (TokenRequest). */
  serviceAccountTokens?: ServiceAccountTokenOptions;
  /**
   * The simulator's time (default: the machine's): every timestamp it writes (creationTimestamp,
   * conditions, taints, deletionTimestamp, certificates' notBefore/notAfter, tokens' iat/exp) and
   * every expiry it judges. Tests hand it the time source of the code under test, e.g.
   * `{ now: () => fakeClock.now() }`; TLS peers check certificates against the real time, so a fake
   * clock should start at it. Timers (grace periods, controller delays, watch timeouts) stay real.
   */
  clock?: KubeSimClock;
  /** Receives one line per request and internal errors. */
  log?: (line: string) => void;
}

/** A running simulator. */
export interface KubeSim {
  /** `https://127.0.0.1:<port>` (or http). */
  url: string;
  host: string;
  port: number;
  /**
   * The kubeconfig to hand to the software under test: the admin's (client certificate over HTTPS,
   * admin token over HTTP), or the `identity`'s when one was asked for.
   */
  kubeconfig: string;
  kubeconfigPath?: string;
  /** The admin's kubeconfig; undefined with `admin: false`. */
  adminKubeconfig?: string;
  /** The identity of the `identity` option. */
  identity?: Identity;
  caCertPem: string;
  /** The admin's bearer token; empty with `admin: false`. */
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
  /**
   * Creates a ServiceAccount (or certificate user) bound to the given ClusterRoles/Roles and returns
   * its kubeconfig, e.g. `createIdentity({ roleFiles: ['deploy/base/rbac/cluster-role.yaml'] })`.
   */
  createIdentity(options: IdentityOptions): Promise<Identity>;
  /** Resolves once the controllers (disruption, ReplicaSet, Deployment, scheduler) have nothing left to do. */
  controllersIdle(): Promise<void>;
  /** Compacts the history now (continue tokens and exact-resourceVersion lists from before are 410). */
  compact(): void;
  /** Resolves once every approved CSR being signed has its certificate or Failed condition. */
  signingIdle(): Promise<void>;
  /**
   * Stops the API server and its controllers. With `holdPort`, its port stays taken by a listener
   * that resets every connection, as a host whose API server is down answers, until a second
   * `stop()`: a port left free could be handed to another test's server that accepts and never
   * answers, and a client would wait out its whole timeout instead of being refused.
   */
  stop(options?: { readonly holdPort?: boolean }): Promise<void>;
}

/** The `kubernetes` Service's ClusterIP in every kube-sim: the first address of the default service range 10.96.0.0/12. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';

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
  const clock = options.clock ?? SYSTEM_CLOCK;
  const store = new ObjectStore(RESOURCES, { historySize: options.watchCacheSize, watchCache: options.watchCache });
  const api = new ObjectApi(store, clock);
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
  // What kube-apiserver's bootstrap controller keeps in every cluster: the API server as a Service,
  // at the first address of the service range (the allocator never hands it out again).
  api.seed(resource('services'), {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { type: 'ClusterIP', clusterIP: KUBERNETES_SERVICE_IP, clusterIPs: [KUBERNETES_SERVICE_IP], ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }], sessionAffinity: 'None' },
  });
  const crdController = new CrdController(store);
  const ca = options.stateDir ? await CertificateAuthority.loadOrCreate(options.stateDir, clock) : await CertificateAuthority.create(undefined, clock);
  const withAdmin = options.admin !== false;
  const adminToken = withAdmin ? (options.adminToken ?? randomBytes(24).toString('hex')) : '';
  const staticTokens = [...(options.tokenAuthFile ? await readTokenFile(options.tokenAuthFile) : []), ...(options.staticTokens ?? [])];
  const serviceAccounts = new ServiceAccountsController(api, ca.certPem);
  const legacyTokens = new LegacyServiceAccountTokens(api, ca.certPem);
  const serviceAccountTokens = new ServiceAccountTokens(store, resource('serviceaccounts'), { ...options.serviceAccountTokens, now: options.serviceAccountTokens?.now ?? (() => clock.now()) });
  const authenticator = new Authenticator({ store, clock, staticTokens, adminToken: withAdmin ? adminToken : undefined, serviceAccountTokens, tokenAuthenticators: [legacyTokens.authenticate] });
  const authorizer = new Authorizer(store);
  api.admission.push(nodeRestriction, rbacEscalationPrevention(authorizer), certificateAdmission(authorizer));
  const aggregation = new ClusterRoleAggregationController(store);
  const controllerDelay = options.controllerDelayMs ?? 0;
  const controllerError = (error: unknown): void => options.log?.(`controller error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  const pdbController = new PdbController(store, clock, options.pdbSyncDelayMs ?? controllerDelay, controllerError);
  const signer = new CsrSigningController(store, ca, clock);
  const podGc = (options.orphanedPodGcSeconds ?? 40) >= 0 ? new PodGcController(api, (options.orphanedPodGcSeconds ?? 40) * 1000) : undefined;
  const nodeGrace = options.nodeMonitorGracePeriodSeconds ?? 50;
  const nodeLifecycle = nodeGrace > 0 ? new NodeLifecycleController(store, nodeGrace * 1000, clock) : undefined;
  if (options.seed !== undefined) {
    loadSeed(api, options.seed);
  }
  const policy = [...defaultClusterRoles(), ...defaultClusterRoleBindings(), ...(options.kubeadmBootstrapPolicy === false ? [] : kubeadmBootstrapPolicy())];
  for (const obj of policy) {
    const def = resourceForKind(String(obj.apiVersion), String(obj.kind), store.definitions);
    if (def && !store.get(def, undefined, obj.metadata.name ?? '')) {
      api.seed(def, obj);
    }
  }
  store.startWatchCaches();
  pdbController.syncAll();
  const workloads = options.workloadControllers !== true ? [] : [new ReplicaSetController(api, controllerDelay, controllerError), new DeploymentController(api, controllerDelay, controllerError), new Scheduler(store, clock, controllerDelay, controllerError)];
  const podStarter = options.podStartupSeconds !== undefined ? new PodStarter(api, options.podStartupSeconds * 1000) : undefined;
  const controllersIdle = async (): Promise<void> => {
    const queues = [pdbController, ...workloads];
    // One controller's work is another's trigger: done when a whole round leaves nothing queued.
    for (let round = 0; round < 50; round++) {
      await Promise.all(queues.map((q) => q.idle()));
      await new Promise((resolve) => setImmediate(resolve));
      if (queues.every((q) => !q.busy)) {
        return;
      }
    }
  };
  // kube-apiserver's compactor: every interval, compact to the resourceVersion seen at the previous one.
  const compactionMs = options.compactionIntervalMs ?? 300_000;
  let compactTo = store.resourceVersion;
  const compactor =
    compactionMs > 0
      ? setInterval(() => {
          store.compact(compactTo);
          compactTo = store.resourceVersion;
        }, compactionMs)
      : undefined;
  compactor?.unref();

  let address = `${host}:${options.port ?? 0}`;
  // Like the old insecure port of kube-apiserver, plain HTTP without any token authentication serves
  // everyone as system:unsecured, a member of system:masters.
  const insecurePort = withAdmin && options.anonymousAuth === undefined && options.insecureHttp === true && !options.tokenAuthFile && (options.staticTokens ?? []).length === 0 && options.adminToken === undefined;
  const handler = new ApiHandler({
    api,
    authenticator,
    authorizer,
    allowAnonymous: options.anonymousAuth ?? insecurePort,
    anonymousUser: insecurePort ? { username: 'system:unsecured', groups: ['system:masters', 'system:authenticated'] } : ANONYMOUS_USER,
    serverAddress: () => address,
    aggregatedDiscovery: options.aggregatedDiscovery ?? true,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    tooLargeResourceVersionWaitMs: options.tooLargeResourceVersionWaitMs ?? 3000,
    minRequestTimeoutSeconds: options.minRequestTimeoutSeconds ?? 1800,
    tokenRequests: serviceAccountTokens,
    log: options.log,
  });
  let server: Server;
  let adminClientCert: KeyPairPem | undefined;
  if (options.insecureHttp) {
    server = createHttpServer(handler.handle);
  } else {
    const serving = await ca.issueKeyPair('CN=kube-apiserver', { sans: servingSans(host, options.tlsSans ?? []), server: true });
    adminClientCert = withAdmin ? await ca.issueKeyPair('CN=kube-sim-admin, O=system:masters', { client: true }) : undefined;
    server = createHttpsServer({ key: serving.keyPem, cert: serving.certPem, ca: [ca.certPem], requestCert: true, rejectUnauthorized: false }, handler.handle);
  }
  server.keepAliveTimeout = 30_000;
  // Every TCP connection, whatever state its TLS handshake or HTTP exchange is in, so that stop()
  // ends them all: a kept-alive one left open would take a client's next request to a stopped
  // server that never answers it.
  const connections = new Set<NetSocket>();
  server.on('connection', (socket: NetSocket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  const listenPort = options.replacing?.port ?? options.port ?? 0;
  await options.replacing?.stop();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : listenPort;
  address = `${urlHost(host).replace(/^\[|\]$/g, '')}:${port}`;
  const url = `${options.insecureHttp ? 'http' : 'https'}://${urlHost(host)}:${port}`;
  const kubeconfigFor = (credentials: KubeconfigCredentials, userName?: string): string =>
    buildKubeconfig({ server: url, caCertPem: options.insecureHttp ? undefined : ca.certPem, credentials, userName });
  const adminKubeconfig = withAdmin ? kubeconfigFor(adminClientCert ?? { token: adminToken }) : undefined;
  const issueClientCertificate = (username: string, groups: string[] = []): Promise<KeyPairPem> => {
    const subject = new x509.Name([{ CN: [username] }, ...groups.map((g) => ({ O: [g] }))]);
    return ca.issueKeyPair(subject, { client: true });
  };
  const identityContext = { api, admin: ADMIN, issueClientCertificate, kubeconfigFor };
  const identity = options.identity ? await createIdentity(identityContext, options.identity) : undefined;
  const kubeconfig = identity?.kubeconfig ?? adminKubeconfig ?? kubeconfigFor({});
  if (options.kubeconfigOut) {
    await writeFile(options.kubeconfigOut, kubeconfig, { mode: 0o600 });
  }
  if (options.adminKubeconfigOut && adminKubeconfig) {
    await writeFile(options.adminKubeconfigOut, adminKubeconfig, { mode: 0o600 });
  }

  let stopped = false;
  let portHolder: NetServer | undefined;
  return {
    url,
    host,
    port,
    kubeconfig,
    kubeconfigPath: options.kubeconfigOut,
    adminKubeconfig,
    identity,
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
    issueClientCertificate,
    requestServiceAccountToken(namespace: string, name: string, spec = {}): string {
      const answer = serviceAccountTokens.request(namespace, name, { spec });
      return String((answer['status'] as { token: string }).token);
    },
    kubeconfigFor,
    createIdentity: (identityOptions: IdentityOptions) => createIdentity(identityContext, identityOptions),
    signingIdle: () => signer.idle(),
    compact: () => store.compact(),
    controllersIdle,
    async stop(stopOptions: { readonly holdPort?: boolean } = {}): Promise<void> {
      if (stopped) {
        const holder = portHolder;
        portHolder = undefined;
        await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
        return;
      }
      stopped = true;
      handler.closeWatches();
      clearInterval(compactor);
      signer.stop();
      pdbController.stop();
      workloads.forEach((controller) => controller.stop());
      podStarter?.stop();
      aggregation.stop();
      crdController.stop();
      serviceAccounts.stop();
      legacyTokens.stop();
      podGc?.stop();
      nodeLifecycle?.stop();
      api.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        connections.forEach((socket) => socket.destroy());
      });
      if (stopOptions.holdPort) {
        const holder = createNetServer((socket) => socket.resetAndDestroy());
        await new Promise<void>((resolve, reject) => holder.once('error', reject).listen(port, host, resolve));
        portHolder = holder;
      }
    },
  };
}
