import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient, drainNode, type DrainEvent, type DrainOptions, type DrainResult, type KubeClient, ClusterAddressGuard } from '@ccos/api/data-access-kube';
import { startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';
import { DRAIN_FLAG_COMBOS, DRAIN_SEED, KUBECTL, type KubectlRun, drainFlags, kubectl as runKubectl, refusedByReason } from '../support/kubectl-drain';

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

/**
 * drainNode against the real kubectl: two simulators seeded with the same YAML, `kubectl drain`
 * on one, drainNode with the same options on the other, then the two clusters must look the same
 * (pods left, cordons) and both must agree on success and on the pods they refused.
 */

/** One simulator seen through kubectl (its own kubeconfig and cache) and through our client. */
interface Side {
  sim: KubeSim;
  client: KubeClient;
  env: NodeJS.ProcessEnv;
}

let dir: string;
let counter = 0;

async function side(): Promise<Side> {
  const sim = await startKubeSim({ seed: DRAIN_SEED });
  const home = join(dir, `side-${counter++}`);
  const kubeconfig = `${home}.kubeconfig`;
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

const kubectl = (s: Side, args: string[], timeoutMs?: number): Promise<KubectlRun> => runKubectl(s.env, args, timeoutMs);
const flags = drainFlags;

/** Everything a drain can change: where every pod is, and which nodes are cordoned. */
async function clusterState(s: Side): Promise<{ pods: string[]; cordoned: string[] }> {
  const pods = await s.client.call('list pods', (o) => s.client.core.listPodForAllNamespaces({}, o));
  const nodes = await s.client.call('list nodes', (o) => s.client.core.listNode({}, o));
  return {
    pods: pods.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}@${p.spec?.nodeName}`).sort(),
    cordoned: nodes.items.filter((n) => n.spec?.unschedulable).map((n) => n.metadata?.name ?? '').sort(),
  };
}

describe('drainNode ends like kubectl drain', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drain-vs-kubectl-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(DRAIN_FLAG_COMBOS)('force=$force deleteEmptyDirData=$deleteEmptyDirData ignoreDaemonSets=$ignoreDaemonSets', async (combo) => {
    const options: DrainOptions = { ...combo, gracePeriodSeconds: 1, timeoutSeconds: 30 };
    const [viaKubectl, viaUs] = [await side(), await side()];
    try {
      const before = await clusterState(viaKubectl);
      expect(await clusterState(viaUs)).toEqual(before);
      const [runs, results] = await Promise.all([
        Promise.all(['w1', 'w3'].map((node) => kubectl(viaKubectl, ['drain', node, ...flags(options)]))),
        Promise.all(['w1', 'w3'].map((node) => drainNode(viaUs.client, node, options))),
      ]);
      const after = await clusterState(viaUs);
      expect(after).toEqual(await clusterState(viaKubectl));
      expect(after.cordoned).toEqual(['w1', 'w3']);
      if (combo.force && combo.deleteEmptyDirData && combo.ignoreDaemonSets) {
        expect(after.pods.filter((p) => p.endsWith('@w1'))).toEqual(['kube-system/etcd-w1@w1', 'kube-system/node-agent-w1@w1']);
      }
      ['w1', 'w3'].forEach((node, i) => {
        const run = runs[i];
        const result: DrainResult = results[i];
        expect(result.ok, `${node}: kubectl exit ${run.code}\n${run.stderr}`).toBe(run.code === 0);
        if (result.ok) {
          expect(run.stdout).toContain(`node/${node} drained`);
          expect(result.evicted.length).toBeGreaterThan(0);
        } else {
          expect(result.failure).toBe('REFUSED');
          expect(Object.keys(refusedByReason(run.stderr)), run.stderr).not.toEqual([]);
          expect(refusedByReason(result.reason)).toEqual(refusedByReason(run.stderr));
          expect(result.blocking.map((b) => b.pod).sort()).toEqual(Object.values(refusedByReason(run.stderr)).flat().sort());
          // A refused drain evicts nothing.
          expect(after.pods.filter((p) => p.endsWith(`@${node}`))).toEqual(before.pods.filter((p) => p.endsWith(`@${node}`)));
        }
      });
    } finally {
      await close(viaKubectl, viaUs);
    }
  });

  it('a blocking PodDisruptionBudget is reported live and the drain finishes once the budget allows it, as with kubectl', async () => {
    const [viaKubectl, viaUs] = [await side(), await side()];
    try {
      const options: DrainOptions = { ignoreDaemonSets: true, timeoutSeconds: 60 };
      let stderr = '';
      const child = spawn(KUBECTL, ['drain', 'w2', ...flags(options)], { env: viaKubectl.env });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));

      const events: DrainEvent[] = [];
      const drained = drainNode(viaUs.client, 'w2', { ...options, retryIntervalMs: 200 }, (event) => events.push(event));
      // kubectl's words in `message` and `detail`; the coded form beside them is the catalogue's.
      await expect.poll(() => events.find((e) => e.type === 'pod-blocked'), { timeout: 10_000, interval: 50 }).toEqual({
        type: 'pod-blocked',
        coded: expect.objectContaining({ code: 'drain.twoSentences' }),
        pod: 'shop/db-5c9b7-00000',
        pdb: 'db-budget',
        message: "Cannot evict pod as it would violate the pod's disruption budget.",
        detail: 'The disruption budget db-budget needs 1 healthy pods and has 1 currently',
        retryInMs: 200,
      });
      await expect.poll(() => stderr, { timeout: 10_000, interval: 50 }).toContain("Cannot evict pod as it would violate the pod's disruption budget.");

      const relax = (s: Side) =>
        s.client.call('relax db-budget', (o) =>
          s.client.policy.patchNamespacedPodDisruptionBudget({ name: 'db-budget', namespace: 'shop', body: [{ op: 'replace', path: '/spec/minAvailable', value: 0 }] }, o),
        );
      await Promise.all([relax(viaKubectl), relax(viaUs)]);
      expect(await drained).toEqual({ ok: true, evicted: ['shop/db-5c9b7-00000'], skipped: [] });
      expect(await exited, stderr).toBe(0);
      expect(await clusterState(viaUs)).toEqual(await clusterState(viaKubectl));
    } finally {
      await close(viaKubectl, viaUs);
    }
  });

  it('a drain that outlives its timeout fails like kubectl’s, naming the blocking pod and its budget', async () => {
    const [viaKubectl, viaUs] = [await side(), await side()];
    try {
      const options: DrainOptions = { ignoreDaemonSets: true, timeoutSeconds: 2 };
      const [run, result] = await Promise.all([kubectl(viaKubectl, ['drain', 'w2', ...flags(options)]), drainNode(viaUs.client, 'w2', { ...options, retryIntervalMs: 200 })]);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('error when evicting pods/"db-5c9b7-00000" -n "shop": global timeout reached: 2s');
      expect(result).toMatchObject({
        ok: false,
        failure: 'TIMEOUT',
        reason: 'the drain did not finish within 2 s; still on the node: shop/db-5c9b7-00000',
        blocking: [{ pod: 'shop/db-5c9b7-00000', pdb: 'db-budget', message: expect.stringContaining("violate the pod's disruption budget") }],
      });
      expect(await clusterState(viaUs)).toEqual(await clusterState(viaKubectl));
    } finally {
      await close(viaKubectl, viaUs);
    }
  });
});
