/**
 * kube-sim at cluster scale: seeds 5,000 Nodes and 50,000 Pods, then compares the latency of the
 * list kubectl drain issues (`GET /api/v1/pods?fieldSelector=spec.nodeName=<n>&limit=500`, served
 * from the node index) with a full pod list, over HTTPS with the admin client certificate.
 *
 *   npx tsx bench/kube-sim-scale.ts [nodes] [podsPerNode]
 *
 * Prints figures; not part of the test suite.
 */
import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';

const NODES = Number(process.argv[2] ?? 5000);
const PODS_PER_NODE = Number(process.argv[3] ?? 10);

function get(sim: KubeSim, agent: Agent, path: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, sim.url), { agent, ca: sim.caCertPem, cert: sim.adminClientCert?.certPem, key: sim.adminClientCert?.keyPem }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(label: string, runs: number, fn: () => Promise<{ status: number; bytes: number }>): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const res = await fn();
    times.push(performance.now() - start);
    if (res.status !== 200) {
      throw new Error(`${label}: HTTP ${res.status}`);
    }
    bytes = res.bytes;
  }
  times.sort((a, b) => a - b);
  const result = { p50: percentile(times, 50), p99: percentile(times, 99) };
  console.log(`${label.padEnd(44)} runs=${String(runs).padStart(4)}  p50=${result.p50.toFixed(2).padStart(8)} ms  p99=${result.p99.toFixed(2).padStart(8)} ms  body=${(bytes / 1024).toFixed(0)} KiB`);
  return result;
}

async function main(): Promise<void> {
  const sim = await startKubeSim({ watchCacheSize: 1000 });
  try {
    const nodes = sim.resource('nodes');
    const pods = sim.resource('pods');
    const seedStart = performance.now();
    for (let n = 0; n < NODES; n++) {
      sim.api.seed(nodes, {
        metadata: { name: `node-${n}`, labels: { 'kubernetes.io/hostname': `node-${n}` } },
        status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: `10.${(n >> 8) & 255}.${n & 255}.1` }] },
      });
    }
    for (let n = 0; n < NODES; n++) {
      for (let p = 0; p < PODS_PER_NODE; p++) {
        sim.api.seed(pods, {
          metadata: { name: `app-${n}-${p}`, namespace: `team-${n % 50}`, labels: { app: `app-${p}` } },
          spec: { nodeName: `node-${n}`, containers: [{ name: 'c', image: 'registry.example/app:1.0' }] },
          status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
        });
      }
    }
    const heap = process.memoryUsage().heapUsed / 1024 / 1024;
    console.log(`seeded ${NODES} nodes and ${NODES * PODS_PER_NODE} pods in ${((performance.now() - seedStart) / 1000).toFixed(1)} s, heap ${heap.toFixed(0)} MiB`);

    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    await get(sim, agent, '/api/v1/pods?limit=1');
    const filtered = await measure('pods, fieldSelector=spec.nodeName (drain)', 500, () =>
      get(sim, agent, `/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-${Math.floor(Math.random() * NODES)}&limit=500`),
    );
    await measure('pods in one namespace, labelSelector', 50, () => get(sim, agent, `/api/v1/namespaces/team-7/pods?labelSelector=app%3Dapp-3`));
    const full = await measure('pods, full list (all namespaces)', 20, () => get(sim, agent, '/api/v1/pods'));
    await measure('nodes, full list', 20, () => get(sim, agent, '/api/v1/nodes'));
    console.log(`filtered/full p50 ratio: ${(filtered.p50 / full.p50).toFixed(4)} (full list is ${(full.p50 / filtered.p50).toFixed(0)}x slower)`);
    agent.destroy();
  } finally {
    await sim.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
