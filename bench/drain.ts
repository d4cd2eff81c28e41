/**
 * drainNode against the real `kubectl drain` on the same kube-sim: two nodes seeded alike with N
 * ReplicaSet-owned pods each (some under PodDisruptionBudgets that allow the evictions), one
 * drained by drainNode, the other by
 * `kubectl drain --ignore-daemonsets --delete-emptydir-data --force --grace-period=0`, one after
 * the other; repeated for a few rounds on fresh nodes.
 *
 *   npx tsx bench/drain.ts [podsPerNode=300] [rounds=1] [evictionConcurrency=10]
 *
 * kube-sim runs in this process, so drainNode shares its CPU with the API server while kubectl has
 * a process of its own. kubectl starts one goroutine per pod, but client-go's default client-side
 * rate limit (5 requests/s, burst 10, per API group client: evictions and pod reads each) paces
 * it; drainNode bounds requests in flight instead. Prints figures; not part of the test suite.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createKubeClient, drainNode, ClusterAddressGuard } from '@ccos/api/data-access-kube';
import { startKubeSim } from '@ccos/tools/kube-sim';
import { REPLICA_SETS, kubectl, median, podsOn, seedNode } from './support/drain-seed';
import { type BenchOptions, type Figure, isMain } from './support/row';

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

export interface DrainBenchSize {
  readonly pods: number;
  readonly rounds: number;
  readonly concurrency: number;
}

/** The row of `npm run bench`: median drain time of drainNode beside kubectl drain's. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const size = options.smoke ? { pods: 20, rounds: 1, concurrency: 10 } : { pods: 300, rounds: 1, concurrency: 10 };
  const { ours, theirs } = await measureDrain(size, options.log);
  return [
    {
      name: `drainNode, ${size.pods} pods`,
      value: ours,
      unit: 'ms',
      reference: { name: 'kubectl drain', value: theirs, measured: true },
      better: 'lower',
      goal: { on: 'ratio', atMost: 1, text: '≤ kubectl' },
    },
  ];
}

async function measureDrain({ pods: PODS, rounds: ROUNDS, concurrency: CONCURRENCY }: DrainBenchSize, log: (line: string) => void): Promise<{ ours: number; theirs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-drain-'));
  const sim = await startKubeSim({ watchCacheSize: 1000 });
  const client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig } });
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, sim.kubeconfig, { mode: 0o600 });
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  try {
    sim.api.seed(sim.resource('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    // Warm kubectl's discovery cache so both sides start with a known API.
    await kubectl(env, ['get', 'nodes']);
    const start = performance.now();
    const noop = await kubectl(env, ['get', 'nodes', '-o', 'name']);
    const kubectlStartMs = performance.now() - start;
    if (noop.code !== 0) {
      throw new Error(noop.stderr);
    }
    log(`kube-sim ${sim.url}; ${PODS} pods per node, ${REPLICA_SETS} ReplicaSets (${REPLICA_SETS / 2} with PDBs), ${ROUNDS} rounds; drainNode evictionConcurrency=${CONCURRENCY}`);
    log(`kubectl process baseline (get nodes, warm cache): ${kubectlStartMs.toFixed(0)} ms`);

    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const a = `round${round}-ours`;
      const b = `round${round}-kubectl`;
      seedNode(sim, a, PODS);
      seedNode(sim, b, PODS);

      let t = performance.now();
      const result = await drainNode(client, a, { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true, gracePeriodSeconds: 0, evictionConcurrency: CONCURRENCY });
      const oursMs = performance.now() - t;
      if (!result.ok || podsOn(sim, a) !== 0) {
        throw new Error(`drainNode failed: ${JSON.stringify(result).slice(0, 500)}`);
      }

      t = performance.now();
      const run = await kubectl(env, ['drain', b, '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--grace-period=0']);
      const kubectlMs = performance.now() - t;
      if (run.code !== 0 || podsOn(sim, b) !== 0) {
        throw new Error(`kubectl drain failed (${run.code}): ${run.stderr.slice(0, 500)}`);
      }
      ours.push(oursMs);
      theirs.push(kubectlMs);
      log(
        `round ${round + 1}: drainNode ${oursMs.toFixed(0).padStart(6)} ms (${result.evicted.length} evicted)   kubectl drain ${kubectlMs.toFixed(0).padStart(6)} ms   kubectl/drainNode ${(kubectlMs / oursMs).toFixed(2)}`,
      );
    }
    const [m1, m2] = [median(ours), median(theirs)];
    log(`median: drainNode ${m1.toFixed(0)} ms, kubectl drain ${m2.toFixed(0)} ms; ratio kubectl/drainNode ${(m2 / m1).toFixed(2)} (drainNode/kubectl ${(m1 / m2).toFixed(2)})`);
    return { ours: m1, theirs: m2 };
  } finally {
    client.close();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const size = { pods: Number(process.argv[2] ?? 300), rounds: Number(process.argv[3] ?? 1), concurrency: Number(process.argv[4] ?? 10) };
  measureDrain(size, (line) => console.log(line)).then(
    () => undefined,
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
