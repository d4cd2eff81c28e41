import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient, type KubeClient, ClusterAddressGuard } from '@ccos/api/data-access-kube';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { eventually } from '@ccos/shared/util-timing/testing';
import { startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { DRAIN_FLAG_COMBOS, DRAIN_SEED, type DrainFlagOptions, drainFlags, kubectl, refusedByReason } from '../support/kubectl-drain';

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

/**
 * removeNode, through the built API over GraphQL, against the seed's manual procedure with the
 * real kubectl: `kubectl drain <flags>` and, when it succeeds, `kubectl delete node`. Two
 * simulators start from the same YAML; afterwards both clusters must hold the same pods on the
 * same nodes and the same cordoned nodes, and both sides must agree on which drains were refused
 * and why. Pods of deleted nodes are not garbage-collected here, so they stay comparable.
 */

interface Side {
  sim: KubeSim;
  client: KubeClient;
  env: NodeJS.ProcessEnv;
}

interface RunView {
  id: string;
  status: string;
  phase: string;
  reason: string | null;
  nodeStatus: string;
  blocking: Array<{ pod: string; pdb: string | null; message: string }>;
  events: Array<{ seq: number; kind: string; pod: string | null; message: string }>;
}

const RUN = 'id status phase reason nodeStatus blocking { pod pdb message } events { seq kind pod message }';

let dir: string;
let counter = 0;
let api: ApiProcess;
let token: string;

async function side(): Promise<Side> {
  const sim = await startKubeSim({ seed: `${SHIPPED_RBAC}\n---\n${DRAIN_SEED}`, orphanedPodGcSeconds: -1 });
  const kubeconfig = join(dir, `side-${counter++}.kubeconfig`);
  await writeFile(kubeconfig, sim.kubeconfig, { mode: 0o600 });
  const client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig } });
  return { sim, client, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') } };
}

async function close(...sides: Side[]): Promise<void> {
  for (const s of sides) {
    s.client.close();
    await s.sim.stop();
  }
}

/** Everything a removal can change: where every pod is, which Nodes exist and which are cordoned. */
async function clusterState(s: Side): Promise<{ pods: string[]; nodes: string[] }> {
  const pods = await s.client.call('list pods', (o) => s.client.core.listPodForAllNamespaces({}, o));
  const nodes = await s.client.call('list nodes', (o) => s.client.core.listNode({}, o));
  return {
    pods: pods.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}@${p.spec?.nodeName}`).sort(),
    nodes: nodes.items.map((n) => `${n.metadata?.name}${n.spec?.unschedulable ? ' (cordoned)' : ''}`).sort(),
  };
}

async function gql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const result = await api.gql<T>(query, variables, token);
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data as T;
}

/** Registers the simulator as a cluster and waits until its Nodes are in the inventory; returns their ids by name. */
async function register(s: Side): Promise<Map<string, string>> {
  const { registerCluster } = await gql<{ registerCluster: { id: string } }>('mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }', {
    i: { name: `sim-${counter++}`, apiServerUrl: s.sim.url, vip: '198.18.0.2', kubeconfig: shippedIdentityKubeconfig(s.sim), csrAutoApprove: false },
  });
  return eventually(
    async () => {
      const { nodes } = await gql<{ nodes: Array<{ id: string; hostname: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id hostname } }', { c: registerCluster.id });
      return nodes.length === 4 ? new Map(nodes.map((node) => [node.hostname, node.id])) : undefined;
    },
    { what: "the cluster's Nodes discovered", timeoutMs: 10_000, intervalMs: 100, context: () => api.output().slice(-3000) },
  );
}

async function lastRun(nodeId: string): Promise<RunView | undefined> {
  return (await gql<{ removalRuns: RunView[] }>(`query($n: ID!) { removalRuns(nodeId: $n) { ${RUN} } }`, { n: nodeId })).removalRuns.at(-1);
}

/** removeNode, then wait for the run to end. */
async function removeAndWait(nodeId: string, options: Record<string, unknown>, timeoutMs = 60_000): Promise<RunView> {
  await gql('mutation($n: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $n, options: $o) { id } }', { n: nodeId, o: options });
  return waitForEnd(nodeId, timeoutMs);
}

async function waitForEnd(nodeId: string, timeoutMs: number): Promise<RunView> {
  let run: RunView | undefined;
  const ended = () => run !== undefined && run.status !== 'RUNNING' && run.events.some((event) => event.kind === 'FINISHED');
  return eventually(async () => {
    run = await lastRun(nodeId).catch(() => undefined);
    return ended() ? run : undefined;
  }, timeoutMs, `the removal of ${nodeId} ending`, 100).catch((error: Error) => {
    throw new Error(`${error.message}: ${JSON.stringify(run)}\n${api.output().slice(-3000)}`);
  });
}

/** The refused pods by kubectl's reason, from a run's blocking pods. */
function blockingByReason(run: RunView): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const entry of run.blocking) {
    out[entry.message] = [...(out[entry.message] ?? []), entry.pod].sort();
  }
  return out;
}

describe('removeNode over GraphQL ends like kubectl drain + kubectl delete node', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'remove-vs-kubectl-'));
    api = await startApiProcess({ env: { LOG_LEVEL: 'info' } });
    token = await api.login();
  });

  afterAll(async () => {
    await api?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(DRAIN_FLAG_COMBOS)('force=$force deleteEmptyDirData=$deleteEmptyDirData ignoreDaemonSets=$ignoreDaemonSets', async (combo: DrainFlagOptions) => {
    const options = { ...combo, gracePeriodSeconds: 1, timeoutSeconds: 30 };
    const [theirs, ours] = [await side(), await side()];
    try {
      const ids = await register(ours);
      const before = await clusterState(theirs);
      expect(await clusterState(ours)).toEqual(before);

      const [manual, removals] = await Promise.all([
        Promise.all(
          ['w1', 'w3'].map(async (node) => {
            const drained = await kubectl(theirs.env, ['drain', node, ...drainFlags(options)]);
            const deleted = drained.code === 0 ? await kubectl(theirs.env, ['delete', 'node', node]) : null;
            return { drained, deleted };
          }),
        ),
        Promise.all(['w1', 'w3'].map((node) => removeAndWait(ids.get(node) ?? '', options))),
      ]);

      const after = await clusterState(ours);
      expect(after).toEqual(await clusterState(theirs));
      ['w1', 'w3'].forEach((node, i) => {
        const { drained, deleted } = manual[i];
        const run = removals[i];
        expect(run.status, `${node}: kubectl exit ${drained.code}\n${drained.stderr}\n${JSON.stringify(run)}`).toBe(drained.code === 0 ? 'SUCCEEDED' : 'FAILED');
        if (run.status === 'SUCCEEDED') {
          expect(deleted?.code).toBe(0);
          expect(run.nodeStatus).toBe('REMOVED');
          expect(after.nodes).not.toContain(node);
          const kinds = run.events.map((event) => event.kind);
          expect(kinds.indexOf('DRAIN_FINISHED')).toBeLessThan(kinds.indexOf('NODE_DELETED'));
        } else {
          expect(run).toMatchObject({ phase: 'DRAIN', nodeStatus: 'DRAIN_FAILED' });
          expect(after.nodes).toContain(`${node} (cordoned)`);
          expect(Object.keys(refusedByReason(drained.stderr)), drained.stderr).not.toEqual([]);
          expect(blockingByReason(run)).toEqual(refusedByReason(drained.stderr));
        }
      });
      if (combo.force && combo.deleteEmptyDirData && combo.ignoreDaemonSets) {
        // The seed's flags: only the DaemonSet and mirror pods stay bound to the deleted Nodes.
        expect(after.pods.filter((p) => p.endsWith('@w1'))).toEqual(['kube-system/etcd-w1@w1', 'kube-system/node-agent-w1@w1']);
        expect(after.nodes).toEqual(['w2', 'w4']);
      }
    } finally {
      await close(theirs, ours);
    }
  });

  it('a removal interrupted by a killed API resumes after the restart and finishes once the budget allows it', async () => {
    const ours = await side();
    try {
      const ids = await register(ours);
      const w2 = ids.get('w2') ?? '';
      await gql('mutation($n: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $n, options: $o) { id } }', { n: w2, o: { ignoreDaemonSets: true } });
      // w2's pod is under a budget that allows no disruption: the drain waits.
      await expect.poll(async () => (await lastRun(w2))?.events.some((event) => event.kind === 'POD_BLOCKED'), { timeout: 20_000, interval: 100 }).toBe(true);

      await api.kill(true);
      await api.restart();
      token = await api.login();
      const resumed = await lastRun(w2);
      expect(resumed?.status).toBe('RUNNING');
      await expect.poll(async () => (await lastRun(w2))?.events.filter((event) => event.kind === 'RESUMED').length, { timeout: 20_000, interval: 100 }).toBe(1);

      await ours.client.call('relax', (o) =>
        ours.client.policy.patchNamespacedPodDisruptionBudget({ name: 'db-budget', namespace: 'shop', body: [{ op: 'replace', path: '/spec/minAvailable', value: 0 }] }, o),
      );
      const run = await waitForEnd(w2, 30_000);
      expect(run).toMatchObject({ status: 'SUCCEEDED', nodeStatus: 'REMOVED' });
      const kinds = run.events.map((event) => event.kind);
      expect(kinds.slice(0, 3)).toEqual(['STARTED', 'CORDONED', 'POD_BLOCKED']);
      // After the restart: cordoned again (already), then the eviction goes through.
      expect(kinds.slice(kinds.indexOf('RESUMED'))).toEqual(
        expect.arrayContaining(['RESUMED', 'CORDONED', 'POD_EVICTED', 'POD_DELETED', 'DRAIN_FINISHED', 'NODE_DELETED', 'FINISHED']),
      );
      expect(run.events.find((event) => event.kind === 'CORDONED' && event.seq > (run.events.find((e) => e.kind === 'RESUMED')?.seq ?? 0))?.message).toBe('node/w2 was already cordoned');
      expect(run.events.map((event) => event.seq)).toEqual(Array.from({ length: run.events.length }, (_, index) => index + 1));
      expect((await clusterState(ours)).nodes).toEqual(['w1', 'w3', 'w4']);
    } finally {
      await close(ours);
    }
  });
});
