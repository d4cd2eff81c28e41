import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeClient, drainNode, type DrainEvent, type DrainOptions, type DrainResult, type KubeClient } from '@ccos/api/data-access-kube';
import { startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * drainNode against the real kubectl: two simulators seeded with the same YAML, `kubectl drain`
 * on one, drainNode with the same options on the other, then the two clusters must look the same
 * (pods left, cordons) and both must agree on success and on the pods they refused.
 */

const KUBECTL = '/usr/bin/kubectl';
const RS_UID = 'd1f0c7e2-0000-4000-8000-0000000000a1';
const CACHE_RS_UID = 'd1f0c7e2-0000-4000-8000-0000000000a2';
const API_RS_UID = 'd1f0c7e2-0000-4000-8000-0000000000a3';
const DB_RS_UID = 'd1f0c7e2-0000-4000-8000-0000000000db';
const DS_UID = 'd1f0c7e2-0000-4000-8000-0000000000d5';
const GONE_DS_UID = 'd1f0c7e2-0000-4000-8000-0000000000d6';

const owner = (kind: string, name: string, uid: string) => `[{apiVersion: apps/v1, kind: ${kind}, name: ${name}, uid: ${uid}, controller: true, blockOwnerDeletion: true}]`;
const ready = '{phase: Running, conditions: [{type: Ready, status: "True"}], containerStatuses: [{name: c, ready: true, restartCount: 0, image: x, imageID: x, state: {running: {}}}]}';
const readyNode = (name: string) => `apiVersion: v1\nkind: Node\nmetadata: {name: ${name}, labels: {kubernetes.io/hostname: ${name}, node-role.kubernetes.io/worker: ""}}\nstatus: {conditions: [{type: Ready, status: "True"}]}`;

/**
 * w1: one pod of every class kubectl drain tells apart (ReplicaSet under a PDB that allows it,
 * emptyDir, DaemonSet, DaemonSet gone, mirror, unmanaged, Succeeded); w3: ReplicaSet, DaemonSet
 * and mirror pods only; w2: a pod whose PDB allows no disruption; w4: spare.
 */
const SEED = [
  readyNode('w1'),
  readyNode('w2'),
  readyNode('w3'),
  readyNode('w4'),
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-6d4f8, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: web}]}}}`,
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: cache-5b7c9, namespace: shop, uid: ${CACHE_RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: cache}}, template: {metadata: {labels: {app: cache}}, spec: {containers: [{name: c, image: cache}]}}}`,
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: api-7f9d2, namespace: shop, uid: ${API_RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: api}}, template: {metadata: {labels: {app: api}}, spec: {containers: [{name: c, image: api}]}}}`,
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: db-5c9b7, namespace: shop, uid: ${DB_RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}`,
  `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: kube-system, uid: ${DS_UID}}
spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: agent}]}}}`,
  `apiVersion: v1
kind: Pod
metadata: {name: web-6d4f8-aaaaa, namespace: shop, labels: {app: web}, ownerReferences: ${owner('ReplicaSet', 'web-6d4f8', RS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, containers: [{name: c, image: web}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: cache-5b7c9-bbbbb, namespace: shop, labels: {app: cache}, ownerReferences: ${owner('ReplicaSet', 'cache-5b7c9', CACHE_RS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, volumes: [{name: scratch, emptyDir: {}}], containers: [{name: c, image: cache}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: node-agent-w1, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'node-agent', DS_UID)}}
spec: {nodeName: w1, containers: [{name: c, image: agent}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: old-agent-w1, namespace: kube-system, labels: {app: old-agent}, ownerReferences: ${owner('DaemonSet', 'old-agent', GONE_DS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, containers: [{name: c, image: agent}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: etcd-w1, namespace: kube-system, annotations: {kubernetes.io/config.mirror: 9f0c, kubernetes.io/config.source: file}}
spec: {nodeName: w1, containers: [{name: c, image: etcd}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: handmade, namespace: default}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, containers: [{name: c, image: busybox}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: report-job-done, namespace: default}
spec: {nodeName: w1, restartPolicy: Never, volumes: [{name: tmp, emptyDir: {}}], containers: [{name: c, image: busybox}]}
status: {phase: Succeeded}`,
  `apiVersion: v1
kind: Pod
metadata: {name: api-7f9d2-ccccc, namespace: shop, labels: {app: api}, ownerReferences: ${owner('ReplicaSet', 'api-7f9d2', API_RS_UID)}}
spec: {nodeName: w3, terminationGracePeriodSeconds: 1, containers: [{name: c, image: api}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: node-agent-w3, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'node-agent', DS_UID)}}
spec: {nodeName: w3, containers: [{name: c, image: agent}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: etcd-w3, namespace: kube-system, annotations: {kubernetes.io/config.mirror: 7a1b}}
spec: {nodeName: w3, containers: [{name: c, image: etcd}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: db-5c9b7-00000, namespace: shop, labels: {app: db}, ownerReferences: ${owner('ReplicaSet', 'db-5c9b7', DB_RS_UID)}}
spec: {nodeName: w2, terminationGracePeriodSeconds: 0, containers: [{name: c, image: db}]}
status: ${ready}`,
  `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-budget, namespace: shop}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}`,
  `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db-budget, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}`,
].join('\n---\n');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** One simulator seen through kubectl (its own kubeconfig and cache) and through our client. */
interface Side {
  sim: KubeSim;
  client: KubeClient;
  env: NodeJS.ProcessEnv;
}

let dir: string;
let counter = 0;

async function side(): Promise<Side> {
  const sim = await startKubeSim({ seed: SEED });
  const home = join(dir, `side-${counter++}`);
  const kubeconfig = `${home}.kubeconfig`;
  await writeFile(kubeconfig, sim.kubeconfig, { mode: 0o600 });
  const client = createKubeClient({ apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig } });
  return { sim, client, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') } };
}

async function close(...sides: Side[]): Promise<void> {
  for (const s of sides) {
    s.client.close();
    await s.sim.stop();
  }
}

function kubectl(s: Side, args: string[], timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(KUBECTL, args, { env: s.env, timeout: timeoutMs }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

function flags(options: DrainOptions): string[] {
  return [
    ...(options.force ? ['--force'] : []),
    ...(options.deleteEmptyDirData ? ['--delete-emptydir-data'] : []),
    ...(options.ignoreDaemonSets ? ['--ignore-daemonsets'] : []),
    `--grace-period=${options.gracePeriodSeconds ?? -1}`,
    `--timeout=${options.timeoutSeconds ?? 0}s`,
  ];
}

/** Everything a drain can change: where every pod is, and which nodes are cordoned. */
async function clusterState(s: Side): Promise<{ pods: string[]; cordoned: string[] }> {
  const pods = await s.client.call('list pods', (o) => s.client.core.listPodForAllNamespaces({}, o));
  const nodes = await s.client.call('list nodes', (o) => s.client.core.listNode({}, o));
  return {
    pods: pods.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}@${p.spec?.nodeName}`).sort(),
    cordoned: nodes.items.filter((n) => n.spec?.unschedulable).map((n) => n.metadata?.name ?? '').sort(),
  };
}

/**
 * The refused pods by reason, from kubectl's `unable to drain node "x" due to error: ...` line or
 * our refusal message (same shape). kubectl 1.32 doubles "cannot delete" for unmanaged pods.
 */
function refusedByReason(text: string): Record<string, string[]> {
  const match = /due to error: (.*?)(?:, continuing command\.\.\.)?$/m.exec(text);
  if (!match) {
    return {};
  }
  const body = match[1].replace(/^\[/, '').replace(/\]$/, '');
  const out: Record<string, string[]> = {};
  for (const part of body.split(/(?:^|, )cannot delete (?:cannot delete )?/).filter(Boolean)) {
    const at = part.indexOf(': ');
    out[part.slice(0, at)] = part.slice(at + 2).split(', ').sort();
  }
  return out;
}

const COMBOS: DrainOptions[] = [false, true].flatMap((force) =>
  [false, true].flatMap((deleteEmptyDirData) => [false, true].map((ignoreDaemonSets) => ({ force, deleteEmptyDirData, ignoreDaemonSets }))),
);

describe('drainNode ends like kubectl drain', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drain-vs-kubectl-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(COMBOS)('force=$force deleteEmptyDirData=$deleteEmptyDirData ignoreDaemonSets=$ignoreDaemonSets', async (combo) => {
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
      await expect.poll(() => events.find((e) => e.type === 'pod-blocked'), { timeout: 10_000, interval: 50 }).toEqual({
        type: 'pod-blocked',
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
