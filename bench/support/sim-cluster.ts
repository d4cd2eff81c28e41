import pg from 'pg';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import type { ApiWorld } from './api-world';
import { samplePod } from './sample-pod';

/** A kube-sim cluster of `nodes` Ready worker Nodes (each running `podsPerNode` pods), registered with the API and fully discovered. */
export interface SimCluster {
  readonly sim: KubeSim;
  readonly clusterId: string;
  /** Milliseconds from registerCluster until the inventory held every Node. */
  readonly discoveryMs: number;
  stop(): Promise<void>;
}

export async function startSimCluster(world: ApiWorld, nodes: number, log: (line: string) => void, name = `bench-${nodes}`, podsPerNode = 0): Promise<SimCluster> {
  const sim = await startKubeSim({ watchCacheSize: Math.max(1000, nodes * 2, nodes * podsPerNode) });
  const db = new pg.Client({ connectionString: world.databaseUrl });
  try {
    for (let index = 0; index < nodes; index++) {
      const nodeName = `worker-${String(index).padStart(5, '0')}`;
      sim.api.seed(sim.resource('nodes'), {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: nodeName, labels: { 'node-role.kubernetes.io/worker': '' } },
        status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: `10.20.${Math.floor(index / 250)}.${(index % 250) + 2}` }] },
      });
      for (let pod = 0; pod < podsPerNode; pod++) {
        sim.api.seed(sim.resource('pods'), samplePod(index * podsPerNode + pod, nodeName));
      }
    }
    await db.connect();
    const started = performance.now();
    const { registerCluster } = await world.gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name, apiServerUrl: sim.url, vip: '198.18.0.1', kubeconfig: sim.kubeconfig, csrAutoApprove: false } },
    );
    let seen = 0;
    for (const deadline = Date.now() + 300_000; seen < nodes; await new Promise((resolve) => setTimeout(resolve, 200))) {
      seen = Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM nodes WHERE cluster_id = $1', [registerCluster.id])).rows[0]?.n ?? 0);
      if (Date.now() > deadline) {
        throw new Error(`only ${seen} of ${nodes} Nodes were discovered within 300 s`);
      }
    }
    const discoveryMs = performance.now() - started;
    log(`${nodes} Nodes discovered ${discoveryMs.toFixed(0)} ms after registerCluster`);
    return { sim, clusterId: registerCluster.id, discoveryMs, stop: () => sim.stop() };
  } catch (error) {
    await sim.stop();
    throw error;
  } finally {
    await db.end();
  }
}
