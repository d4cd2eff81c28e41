import { resolve } from 'node:path';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { type AddNodeInput, AddNodeDocument, ApproveCsrDocument, CsrsDocument, type NodeStatusQuery, NodeStatusDocument, RegisterClusterDocument } from '@ccos/shared/api-schema';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type Lab, startLab } from '@ccos/tools/lab';
import { type ApiProcess, type AuthorizedGql, freePort, gqlAs, startApiProcess } from './api-process';

export const AGENT_EXECUTABLE = resolve('dist/apps/boot-worker/boot-worker');
export const BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';

export interface ScaleOutWorldOptions {
  readonly hosts: number;
  /** What the lab is for, shown by `npm run lab -- status` (default `scale-out-world`). */
  readonly name?: string;
  readonly csrAutoApprove?: boolean;
  /** Hostname of lab host N is `${hostnamePrefix}${N}` (default `h`). */
  readonly hostnamePrefix?: string;
  /** Extra environment for the API process (a function of the lab when it needs the lab's addresses). */
  readonly apiEnv?: Record<string, string> | ((lab: Lab) => Record<string, string>);
  /** Stand-in kubelet settings. */
  readonly kubelet?: { readonly csrTimeoutSeconds?: number; readonly heartbeatSeconds?: number; readonly readyDelaySeconds?: number; readonly servingCertificateSeconds?: number };
  /** Seconds without a kubelet heartbeat before kube-sim marks a Node Ready Unknown (default kube-sim's, 50). */
  readonly nodeMonitorGracePeriodSeconds?: number;
}

export type NodeStatusView = NonNullable<NodeStatusQuery['node']>;

/**
 * Everything a scale-out test needs, real: kube-sim as the cluster, lab hosts running
 * sshd, the built API process reachable from the hosts at the lab gateway, and a
 * cluster registered with the VIP and the machine config server's CA. The lab is the
 * test's own, next to any others on the machine, so tests need not wait for each other.
 */
export interface ScaleOutWorld {
  readonly sim: KubeSim;
  /** The kubeconfig the cluster is registered with: the service's account, bound to exactly the shipped roles (deploy/base/rbac). `sim.kubeconfig` is the admin's, for the test playing the cluster admin, kubelets and controllers. */
  readonly serviceKubeconfig: string;
  readonly lab: Lab;
  readonly api: ApiProcess;
  readonly token: string;
  readonly clusterId: string;
  /** The API's `gql` as the world's admin. */
  readonly gql: AuthorizedGql;
  /** addNode for lab host `index` (0-based) with its password; returns the node id. */
  addHost(index: number, overrides?: Partial<AddNodeInput>): Promise<string>;
  /** Another replica: the same environment (with `env` over it, e.g. `SERVICE_ROLE=worker`) on the same database, on a port of its own; stopped with the world. */
  startReplica(env?: Record<string, string>): Promise<ApiProcess>;
  /** Polls the node until its status is one of `statuses`. */
  waitForStatus(nodeId: string, statuses: readonly string[], timeoutMs: number): Promise<NodeStatusView>;
  stop(): Promise<void>;
}

export async function startScaleOutWorld(options: ScaleOutWorldOptions): Promise<ScaleOutWorld> {
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch(() => undefined);
    }
  };
  try {
    // The lab's VIP is not known before the lab starts, so the certificate does not name it;
    // the lab then gives the kubelets tls-server-name. The cluster has what the deployment ships
    // for every managed cluster (deploy/base/rbac), and the service talks to it as its account
    // there, never as the admin: a missing or excessive permission in the shipped roles fails here.
    const sim = await startKubeSim({ seed: SHIPPED_RBAC, ...(options.nodeMonitorGracePeriodSeconds === undefined ? {} : { nodeMonitorGracePeriodSeconds: options.nodeMonitorGracePeriodSeconds }) });
    const serviceKubeconfig = shippedIdentityKubeconfig(sim);
    cleanups.push(() => sim.stop());
    const lab = await startLab({
      hosts: options.hosts,
      name: options.name ?? 'scale-out-world',
      hostnamePrefix: options.hostnamePrefix,
      kubeconfig: sim.kubeconfig,
      kubelet: { csrTimeoutSeconds: 600, heartbeatSeconds: 5, readyDelaySeconds: 1, ...options.kubelet },
    });
    cleanups.push(() => lab.stop());
    const port = await freePort('0.0.0.0');
    const apiEnv = {
      AGENT_API_URL: `https://${lab.gateway}:${port}`,
      ARTIFACTS_DIR: lab.artifactsDir,
      AGENT_BINARY: AGENT_EXECUTABLE,
      MIN_MEMORY_MB: '256',
      MIN_CPUS: '1',
      LOG_LEVEL: 'info',
      ...(typeof options.apiEnv === 'function' ? options.apiEnv(lab) : options.apiEnv),
    };
    const api = await startApiProcess({ host: '0.0.0.0', port, env: apiEnv });
    cleanups.push(() => api.stop());
    const token = await api.login();
    const gql = gqlAs(api, token);
    const registered = await gql(RegisterClusterDocument, {
      input: {
        name: 'lab',
        apiServerUrl: sim.url,
        vip: lab.vip,
        kubeconfig: serviceKubeconfig,
        bootstrapStyle: 'KUBEADM',
        machineConfigCaCert: lab.machineConfigCaCert,
        csrAutoApprove: options.csrAutoApprove ?? false,
      },
    });
    const clusterId = registered.data?.registerCluster.id;
    if (!clusterId) {
      throw new Error(`registerCluster failed: ${JSON.stringify(registered.errors)}`);
    }
    const world: ScaleOutWorld = {
      sim,
      serviceKubeconfig,
      lab,
      api,
      token,
      clusterId,
      gql,
      async startReplica(env = {}) {
        const replica = await startApiProcess({ host: '0.0.0.0', port: await freePort('0.0.0.0'), env: { ...apiEnv, ...env }, database: api.database ?? undefined });
        // Stopped before the first process, which owns (and drops) the database.
        cleanups.push(() => replica.stop());
        return replica;
      },
      async addHost(index, overrides = {}) {
        const host = lab.hosts[index];
        const added = await gql(AddNodeDocument, {
          input: { clusterId, hostname: host.hostname, ip: host.ip, sshPort: host.port, sshUser: host.user, password: host.password, ...overrides },
        });
        if (!added.data?.addNode) {
          throw new Error(`addNode ${host.hostname} failed: ${JSON.stringify(added.errors)}`);
        }
        return added.data.addNode.id;
      },
      async waitForStatus(nodeId, statuses, timeoutMs) {
        const started = Date.now();
        let last: NodeStatusView | null = null;
        while (Date.now() - started < timeoutMs) {
          const result = await gql(NodeStatusDocument, { id: nodeId });
          last = result.data?.node ?? null;
          if (last && statuses.includes(last.status)) {
            return last;
          }
          await new Promise((done) => setTimeout(done, 250));
        }
        throw new Error(`node ${nodeId} did not reach ${statuses.join('|')} within ${timeoutMs} ms; last: ${JSON.stringify(last)}\n${api.output().slice(-3000)}`);
      },
      stop,
    };
    return world;
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Plays the operator while installs run: approves through the API every CSR pending in
 * the cluster, until each node is in one of `settled` (e.g. JOINED or INSTALL_FAILED).
 * Tolerates the API being down for a while (a test may restart it). Returns the final
 * status of each node and the CSRs approved. With `onlyTheirs`, approves only the CSRs the
 * service matched to one of `nodeIds`, so tests running side by side in one world leave each
 * other's CSRs pending.
 */
export async function approveUntilSettled(
  world: ScaleOutWorld,
  nodeIds: readonly string[],
  settled: readonly string[],
  timeoutMs: number,
  { onlyTheirs = false }: { readonly onlyTheirs?: boolean } = {},
): Promise<{ statuses: Record<string, string>; approved: string[] }> {
  const approved: string[] = [];
  const statuses: Record<string, string> = {};
  const started = Date.now();
  for (;;) {
    try {
      for (const id of nodeIds) {
        const result = await world.gql(NodeStatusDocument, { id });
        statuses[id] = result.data?.node?.status ?? statuses[id] ?? '';
      }
      if (nodeIds.every((id) => settled.includes(statuses[id] ?? ''))) {
        return { statuses, approved };
      }
      const pending = await world.gql(CsrsDocument, { clusterId: world.clusterId, pendingOnly: true });
      for (const csr of pending.data?.csrs ?? []) {
        if (onlyTheirs && !nodeIds.includes(csr.node?.id ?? '')) {
          continue;
        }
        const result = await world.gql(ApproveCsrDocument, { clusterId: world.clusterId, name: csr.name });
        if (!result.errors) {
          approved.push(csr.name);
        }
      }
    } catch {
      // The API is restarting; try again.
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`nodes not settled after ${timeoutMs} ms: ${JSON.stringify(statuses)}; approved ${approved.join(', ')}\n${world.api.output().slice(-3000)}`);
    }
    await new Promise((wake) => setTimeout(wake, 300));
  }
}
