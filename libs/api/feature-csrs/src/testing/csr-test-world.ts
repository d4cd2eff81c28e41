import { randomUUID } from 'node:crypto';
import { parse } from 'yaml';
import type { ClusterDirectory } from '@ccos/api/data-access-cluster-connections';
import { ClusterEntity, CsrDecisionStore, CsrInventory, type Database, InstallRunNotices, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { type BootstrapIdentity, type KubeClient, ClusterAddressGuard, createKubeClient, mintBootstrapIdentity } from '@ccos/api/data-access-kube';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { KUBELET_CLIENT_SIGNER, OPENSHIFT_NODE_BOOTSTRAPPER } from '@ccos/shared/domain';
import { type Clock, SystemClock } from '@ccos/shared/util-timing';
import { eventually } from '@ccos/shared/util-timing/testing';
// Tests of this feature run against the in-process Kubernetes API simulator: a test-only
// dependency on a tool, confined to this fixture.
import { type KubeSim, generateCertificateRequest, startKubeSim } from '@ccos/tools/kube-sim';

/** Kubelet-style requests made ahead of a measurement (a surge), for `createCsr({ csrPem })`. */
export { generateCertificateRequest };

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

/** The bearer token kube-sim maps to the OpenShift node-bootstrapper service account: the credential every worker shares. */
export const BOOTSTRAPPER_TOKEN = 'node-bootstrapper-token-for-tests';

/** Where the test world mints install runs' bootstrap identities, as the service does. */
export const TEST_BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';

/** What a kubelet-style CSR asks for. */
export interface KubeletCsrRequest {
  readonly signerName?: string;
  readonly commonName: string;
  readonly organizations?: string[];
  readonly dnsNames?: string[];
  readonly ipAddresses?: string[];
  readonly usages?: string[];
  /**
   * Who creates it: the install run's own identity of the node the CN names (default, when that
   * node was added with one), the shared node-bootstrapper (`{ shared: true }`, the default for
   * any other CN), a node name (its own client certificate), or a kubeconfig.
   */
  readonly as?: { readonly node: string } | { readonly kubeconfig: string } | { readonly shared: true } | { readonly run: string } | { readonly certificateOf: string };
  /**
   * A request made beforehand (then the name fields above are not used for it); with its key,
   * `{ certificateOf }` can use the certificate it is issued.
   */
  readonly csrPem?: string;
  readonly keyPem?: string;
}

/** The Kubernetes API the world talks to: kube-sim in this process, or one running elsewhere. */
export interface SimEndpoint {
  readonly url: string;
  /** Admin kubeconfig: the test's own kubelets and cluster-admin checks. */
  readonly kubeconfig: string;
  /** The service's account (deploy/base/rbac), what the product under test talks to the cluster as; the admin's when absent. */
  readonly serviceKubeconfig?: string;
  /** A kubeconfig authenticating with the node-bootstrapper token. */
  readonly bootstrapperKubeconfig: string;
  /** A kubeconfig with a node's client certificate, signed by the cluster CA outside any CSR (in-process only). */
  nodeKubeconfig?(node: string): Promise<string>;
  /** A kubeconfig authenticating with a certificate and its key (in-process only). */
  certificateKubeconfig?(certPem: string, keyPem: string): string;
  /** Resolves once approved CSRs are signed (in-process only). */
  signingIdle?(): Promise<void>;
  stop(): Promise<void>;
}

/** A real Postgres database with the schema, a kube-sim, and a registered cluster pointing at it. */
export interface CsrTestWorld {
  /** For seeding rows and reading what the feature wrote; the feature itself gets `stores`. */
  readonly dataSource: Database;
  /** The stores createCsrFeature takes, on this world's database. */
  readonly stores: { readonly decisions: CsrDecisionStore; readonly inventory: CsrInventory; readonly notices: InstallRunNotices };
  readonly database: TestDatabase;
  readonly sim: SimEndpoint;
  /** The time of the cluster and of the world's records; the replicas' CSR policy reads it too. */
  readonly clock: Clock;
  readonly clusterId: string;
  readonly directory: ClusterDirectory;
  /** An admin client of the simulator. */
  readonly admin: KubeClient;
  /**
   * Adds a node being installed whose START_KUBELET step started `kubeletStartedAgoMs` ago, with
   * a bootstrap identity minted in the cluster for its run (unless `withIdentity` is false).
   */
  addInstallingNode(hostname: string, ip: string, kubeletStartedAgoMs?: number, options?: { readonly withIdentity?: boolean }): Promise<string>;
  /** The identity minted for a node's run by addInstallingNode. */
  identityOf(hostname: string): BootstrapIdentity | undefined;
  /** Creates a CSR the way a kubelet does; returns its name, when it was sent and when the cluster answered that it exists. */
  createCsr(request: KubeletCsrRequest): Promise<{ name: string; sentAt: number; createdAt: number }>;
  /** The CSR's condition types as the cluster has them, comma-separated ('' while pending). */
  conditionsOf(name: string): Promise<string>;
  setAutoApprove(enabled: boolean): Promise<void>;
  setAutoApproveRenewals(enabled: boolean): Promise<void>;
  /** A node this service joined `joinedAgoMs` ago (status JOINED, its install run succeeded); returns its id. */
  addJoinedNode(hostname: string, ip: string, joinedAgoMs?: number): Promise<string>;
  stop(): Promise<void>;
}

/** The node-bootstrapper's token line for kube-sim (`--token-auth-file` format: token,user,uid,"groups"). */
export const BOOTSTRAPPER_TOKEN_LINE = `${BOOTSTRAPPER_TOKEN},${OPENSHIFT_NODE_BOOTSTRAPPER},node-bootstrapper,"system:serviceaccounts,system:serviceaccounts:openshift-machine-config-operator"`;

/**
 * What the machine-config-operator applies on an OpenShift cluster so that its node-bootstrapper
 * ServiceAccount may create CSRs; kube-sim authorizes with RBAC, so the test cluster needs it too.
 */
export const NODE_BOOTSTRAPPER_BINDING = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: system-bootstrap-node-bootstrapper}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:node-bootstrapper}
subjects: [{kind: ServiceAccount, name: node-bootstrapper, namespace: openshift-machine-config-operator}]`;

/** What a CSR test cluster starts with: OpenShift's node-bootstrapper binding and what the deployment ships for every cluster (the service's account and RBAC, the runs' identities' namespace). */
export const CSR_TEST_SEED = `${NODE_BOOTSTRAPPER_BINDING}\n---\n${SHIPPED_RBAC}`;

/** kube-sim in this process, with the node-bootstrapper token, stamping objects and certificates with `clock`'s time. */
export async function startInProcessSim(clock: Pick<Clock, 'now'> = new SystemClock()): Promise<SimEndpoint> {
  const sim: KubeSim = await startKubeSim({
    clock: { now: () => clock.now() },
    seed: CSR_TEST_SEED,
    staticTokens: [
      { token: BOOTSTRAPPER_TOKEN, user: OPENSHIFT_NODE_BOOTSTRAPPER, uid: 'node-bootstrapper', groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator'] },
    ],
    nodeMonitorGracePeriodSeconds: 0,
  });
  return {
    url: sim.url,
    kubeconfig: sim.kubeconfig,
    serviceKubeconfig: shippedIdentityKubeconfig(sim),
    bootstrapperKubeconfig: sim.kubeconfigFor({ token: BOOTSTRAPPER_TOKEN }),
    nodeKubeconfig: async (node) => sim.kubeconfigFor(await sim.issueClientCertificate(`system:node:${node}`, ['system:nodes'])),
    certificateKubeconfig: (certPem, keyPem) => sim.kubeconfigFor({ certPem, keyPem }),
    signingIdle: () => sim.signingIdle(),
    stop: () => sim.stop(),
  };
}

/**
 * `clock` (default: the process's) is the time of the in-process kube-sim, of the rows the world
 * writes and of the replicas' policy: with a fake one, a test moves time instead of waiting for it.
 * A `sim` of its own keeps its own time, so give it the same clock or none.
 */
export async function startCsrTestWorld(
  options: { autoApprove?: boolean; autoApproveRenewals?: boolean; bootstrapStyle?: 'OPENSHIFT' | 'KUBEADM'; sim?: SimEndpoint; clock?: Clock } = {},
): Promise<CsrTestWorld> {
  const clock = options.clock ?? new SystemClock();
  const database = await createTestDatabase('ccos_csrs');
  const dataSource = await openDatabase({ url: database.url, maxConnections: 5 });
  const sim = options.sim ?? (await startInProcessSim(clock));
  const admin = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig } });
  // The runs' identities are minted as the service mints them: as its own account.
  const service = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.serviceKubeconfig ?? sim.kubeconfig } });
  const identities = new Map<string, BootstrapIdentity>();
  const clusters = dataSource.getRepository(ClusterEntity);
  const clusterId = randomUUID();
  await clusters.save(
    clusters.create({
      id: clusterId,
      name: `sim-${clusterId.slice(0, 8)}`,
      apiServerUrl: sim.url,
      vip: '198.18.0.2',
      credentialsSealed: 'not-sealed-in-tests',
      credentialKind: 'KUBECONFIG',
      csrAutoApprove: options.autoApprove ?? false,
      autoApproveRenewals: options.autoApproveRenewals ?? true,
      bootstrapStyle: options.bootstrapStyle ?? 'OPENSHIFT',
    }),
  );
  const directory: ClusterDirectory = {
    get: (id) => clusters.findOneByOrFail({ id }),
    list: () => clusters.find({ order: { name: 'ASC' } }),
    credentialsOf: () => ({ kind: 'KUBECONFIG', kubeconfig: sim.serviceKubeconfig ?? sim.kubeconfig }),
    clientOptionsOf: () => ({ apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.serviceKubeconfig ?? sim.kubeconfig }, addresses: LOOPBACK }),
  };
  const requesters = new Map<string, KubeClient>();
  /** The private key of every CSR the world created, by CSR name: what a kubelet keeps beside its certificate. */
  const keys = new Map<string, string>();
  const requester = async (as: Exclude<KubeletCsrRequest['as'], undefined>): Promise<KubeClient> => {
    if ('certificateOf' in as) {
      // The kubelet's next request, with the certificate its CSR was issued (as it is on disk).
      const key = `certificate:${as.certificateOf}`;
      const known = requesters.get(key);
      if (known) {
        return known;
      }
      const keyPem = keys.get(as.certificateOf);
      if (!keyPem || !sim.certificateKubeconfig) {
        throw new Error(`no key or no in-process sim for the certificate of ${as.certificateOf}`);
      }
      const certificate = await eventually(async () => (await admin.certificates.readCertificateSigningRequest({ name: as.certificateOf })).status?.certificate || undefined, 5000, `${as.certificateOf} issued`);
      const client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.certificateKubeconfig(Buffer.from(certificate, 'base64').toString('utf8'), keyPem) } });
      requesters.set(key, client);
      return client;
    }
    // A run's client by its identity: a reinstall of the same name has another one.
    const key = 'shared' in as ? 'bootstrapper' : 'run' in as ? `run:${identities.get(as.run)?.username ?? as.run}` : 'node' in as ? `node:${as.node}` : as.kubeconfig;
    let client = requesters.get(key);
    if (!client) {
      let kubeconfig: string;
      if ('shared' in as) {
        kubeconfig = sim.bootstrapperKubeconfig;
      } else if ('run' in as) {
        const identity = identities.get(as.run);
        if (!identity) {
          throw new Error(`${as.run} has no install run identity`);
        }
        client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'TOKEN', token: identity.token, caCert: caOf(sim.kubeconfig) } });
        requesters.set(key, client);
        return client;
      } else if ('node' in as) {
        if (!sim.nodeKubeconfig) {
          throw new Error('node identities need kube-sim in this process');
        }
        kubeconfig = await sim.nodeKubeconfig(as.node);
      } else {
        kubeconfig = as.kubeconfig;
      }
      client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig } });
      requesters.set(key, client);
    }
    return client;
  };
  return {
    dataSource,
    stores: { decisions: new CsrDecisionStore(dataSource), inventory: new CsrInventory(dataSource), notices: new InstallRunNotices(dataSource) },
    database,
    sim,
    clock,
    clusterId,
    directory,
    admin,
    async addInstallingNode(hostname, ip, kubeletStartedAgoMs = 1000, { withIdentity = true } = {}) {
      const nodeId = randomUUID();
      const runId = randomUUID();
      await dataSource.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'INSTALLING')`, [nodeId, clusterId, hostname, ip]);
      let identity: BootstrapIdentity | null = null;
      if (withIdentity) {
        identity = await mintBootstrapIdentity(service, { namespace: TEST_BOOTSTRAP_NAMESPACE, name: `run-${runId}`, now: new Date(clock.now()), expiresAt: new Date(clock.now() + 3600_000) });
        identities.set(hostname, identity);
      }
      const startedAt = new Date(clock.now() - kubeletStartedAgoMs);
      // The run started a minute before its kubelet (on the world's clock, as the approval window is judged).
      await dataSource.query(
        `INSERT INTO install_runs (id, node_id, status, requested_by, started_at, deadline_at, bootstrap_identity, bootstrap_identity_uid, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $5, now() + interval '1 hour', $3, $4, now())`,
        [runId, nodeId, identity?.username ?? null, identity?.uid ?? null, new Date(startedAt.getTime() - 60_000)],
      );
      await dataSource.query(
        `INSERT INTO step_events (run_id, seq, step, status, occurred_at, received_at) VALUES ($1, 1, 'START_KUBELET', 'STARTED', $2, $2)`,
        [runId, startedAt],
      );
      return nodeId;
    },
    identityOf: (hostname) => identities.get(hostname),
    async conditionsOf(name) {
      const csr = await admin.certificates.readCertificateSigningRequest({ name });
      return csr.status?.conditions?.map((condition) => condition.type).join(',') ?? '';
    },
    async createCsr(request) {
      const named = request.commonName.startsWith('system:node:') ? request.commonName.slice('system:node:'.length) : null;
      const client = await requester(request.as ?? (named !== null && identities.has(named) ? { run: named } : { shared: true }));
      const { csrPem, keyPem } = request.csrPem
        ? { csrPem: request.csrPem, keyPem: request.keyPem }
        : await generateCertificateRequest({
            commonName: request.commonName,
            organizations: request.organizations ?? ['system:nodes'],
            dnsNames: request.dnsNames,
            ipAddresses: request.ipAddresses,
          });
      const signerName = request.signerName ?? KUBELET_CLIENT_SIGNER;
      const sentAt = performance.now();
      const created = await client.call('create csr', (callOptions) =>
        client.certificates.createCertificateSigningRequest(
          {
            body: {
              apiVersion: 'certificates.k8s.io/v1',
              kind: 'CertificateSigningRequest',
              metadata: { generateName: 'csr-' },
              spec: {
                request: Buffer.from(csrPem).toString('base64'),
                signerName,
                usages: request.usages ?? ['digital signature', signerName === KUBELET_CLIENT_SIGNER ? 'client auth' : 'server auth'],
              },
            },
          },
          callOptions,
        ),
      );
      const createdAt = performance.now();
      const name = created.metadata?.name ?? '';
      if (keyPem) {
        keys.set(name, keyPem);
      }
      return { name, sentAt, createdAt };
    },
    async setAutoApprove(enabled) {
      await clusters.update({ id: clusterId }, { csrAutoApprove: enabled });
    },
    async setAutoApproveRenewals(enabled) {
      await clusters.update({ id: clusterId }, { autoApproveRenewals: enabled });
    },
    async addJoinedNode(hostname, ip, joinedAgoMs = 24 * 3600_000) {
      const nodeId = randomUUID();
      const runId = randomUUID();
      const startedAt = new Date(clock.now() - joinedAgoMs);
      await dataSource.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'JOINED')`, [nodeId, clusterId, hostname, ip]);
      await dataSource.query(
        `INSERT INTO install_runs (id, node_id, status, requested_by, started_at, deadline_at, bootstrap_identity, bootstrap_identity_uid)
         VALUES ($1, $2, 'SUCCEEDED', 'operator', $3, $3::timestamptz + interval '1 hour', $4, $5)`,
        [runId, nodeId, startedAt, `system:serviceaccount:${TEST_BOOTSTRAP_NAMESPACE}:run-${runId}`, `uid-${runId}`],
      );
      await dataSource.query(`INSERT INTO step_events (run_id, seq, step, status, occurred_at, received_at) VALUES ($1, 1, 'START_KUBELET', 'STARTED', $2, $2)`, [runId, startedAt]);
      return nodeId;
    },
    async stop() {
      for (const client of requesters.values()) {
        client.close();
      }
      admin.close();
      service.close();
      await sim.stop();
      await dataSource.destroy();
      await database.drop();
    },
  };
}

/** The CA of a kubeconfig (PEM), for clients that authenticate with a bearer token. */
function caOf(kubeconfig: string): string {
  const parsed = parse(kubeconfig) as { clusters?: Array<{ cluster?: { 'certificate-authority-data'?: string } }> };
  const data = parsed.clusters?.[0]?.cluster?.['certificate-authority-data'];
  if (!data) {
    throw new Error('the kubeconfig has no certificate-authority-data');
  }
  return Buffer.from(data, 'base64').toString('utf8');
}

