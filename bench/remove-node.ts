/**
 * removeNode through the GraphQL API against the seed's manual procedure with the real kubectl,
 * on one kube-sim: two nodes seeded alike with N ReplicaSet-owned pods each (budgets on half of
 * them, all allowing the evictions). One is removed with removeNode (force, deleteEmptyDirData,
 * ignoreDaemonSets, gracePeriodSeconds 0), timed from the mutation until the removalProgress
 * subscription reports the drain finished and the run finished; then the other is drained with
 * `kubectl drain --ignore-daemonsets --delete-emptydir-data --force --grace-period=0` and deleted
 * with `kubectl delete node`. Repeated for a few rounds on fresh nodes, and for each node size
 * (the table: 300 pods, then one node with 1,000), in one world.
 *
 *   npx tsx bench/remove-node.ts [podsPerNode=300[,1000…]] [rounds=1]
 *
 * The built API runs in a process of its own, as `npm start` runs it (build it first:
 * `npx nx run api:build`), on a fresh database of the Postgres server at 127.0.0.1:5432; kube-sim
 * runs in this process, as in bench/drain.ts, and kubectl has a process of its own. The removal records every
 * eviction as an event (written in batches) and publishes it to subscribers. Prints figures; not
 * part of the test suite.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestDatabase } from '@ccos/api/data-access-db/testing';
import { startKubeSim } from '@ccos/tools/kube-sim';
import { startBuiltApi } from './support/built-api';
import { REPLICA_SETS, kubectl, median, podsOn, seedNode } from './support/drain-seed';
import { type BenchOptions, type Figure, isMain } from './support/row';

const ADMIN_PASSWORD = 'bench-admin-password';

/** The row of `npm run bench`: removeNode, from the mutation to FINISHED, beside kubectl drain + delete node; 300 pods, and one node with 1,000. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const sizes = options.smoke ? [20] : [300, 1000];
  const results = await measureRemoval(sizes, 1, options.log);
  return results.map(({ pods, total, kubectlTotal }) => ({
    name: `removeNode through the API, ${pods} pods`,
    value: total,
    unit: 'ms',
    reference: { name: 'kubectl drain + delete node', value: kubectlTotal, measured: true },
    better: 'lower' as const,
    goal: { on: 'ratio' as const, atMost: 1, text: '≤ kubectl' },
  }));
}

interface RemovalFigures {
  readonly pods: number;
  readonly drain: number;
  readonly total: number;
  readonly kubectlDrain: number;
  readonly kubectlTotal: number;
}

async function measureRemoval(sizes: readonly number[], ROUNDS: number, log: (line: string) => void): Promise<RemovalFigures[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-remove-node-'));
  const database = await createTestDatabase('ccos_bench');
  const sim = await startKubeSim({ watchCacheSize: 5000, orphanedPodGcSeconds: -1 });
  const api = await startBuiltApi({ DATABASE_URL: database.url, SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop', ADMIN_PASSWORD, DATA_DIR: dir, LOG_LEVEL: 'warn', ALLOW_CLUSTER_ADDRESSES: 'loopback' });
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, sim.kubeconfig, { mode: 0o600 });
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  const gql = async <T>(query: string, variables: Record<string, unknown>, token?: string): Promise<T> => {
    const response = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: T; errors?: unknown[] };
    if (body.errors) {
      throw new Error(JSON.stringify(body.errors));
    }
    return body.data as T;
  };
  const ws = createClient({ url: `${api.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: async () => ({ authorization: `Bearer ${token}` }) });
  let token = '';
  try {
    token = (await gql<{ login: { token: string } }>('mutation($u:String!,$p:String!){ login(username:$u,password:$p){ token } }', { u: 'admin', p: ADMIN_PASSWORD })).login.token;
    sim.api.seed(sim.resource('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    const { registerCluster } = await gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name: 'bench', apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig: sim.kubeconfig, csrAutoApprove: false } },
      token,
    );
    await kubectl(env, ['get', 'nodes']);
    const figures: RemovalFigures[] = [];
    for (const PODS of sizes) {
      log(`kube-sim ${sim.url}; ${PODS} pods per node, ${REPLICA_SETS} ReplicaSets (${REPLICA_SETS / 2} with PDBs), ${ROUNDS} rounds; removeNode through the API vs kubectl drain + kubectl delete node`);

      const rows: Array<{ drain: number; total: number; kubectlDrain: number; kubectlTotal: number }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const ours = `p${PODS}-round${round}-ours`;
        const theirs = `p${PODS}-round${round}-kubectl`;
        seedNode(sim, ours, PODS);
        seedNode(sim, theirs, PODS);
        let nodeId: string | undefined;
        for (let attempt = 0; attempt < 200 && !nodeId; attempt++) {
          const { nodes } = await gql<{ nodes: Array<{ id: string; hostname: string; status: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id hostname status } }', { c: registerCluster.id }, token);
          nodeId = nodes.find((node) => node.hostname === ours && node.status === 'JOINED')?.id;
          if (!nodeId) {
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
        if (!nodeId) {
          throw new Error(`${ours} was not discovered`);
        }

        // Subscribe first, so the clock stops at the moment the API announces the end.
        const marks: { drain?: number; total?: number } = {};
        let events = 0;
        const finished = new Promise<void>((resolve, reject) => {
          ws.subscribe<{ removalProgress: { events: Array<{ kind: string }> } }>(
            { query: 'subscription($n: ID!) { removalProgress(nodeId: $n) { events { kind } } }', variables: { n: nodeId } },
            {
              next: (message) => {
                for (const event of message.data?.removalProgress.events ?? []) {
                  events++;
                  if (event.kind === 'DRAIN_FINISHED') {
                    marks.drain = performance.now();
                  }
                  if (event.kind === 'FINISHED') {
                    marks.total = performance.now();
                    resolve();
                  }
                }
              },
              error: reject,
              complete: () => undefined,
            },
          );
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        const t0 = performance.now();
        await gql(
          'mutation($n: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $n, options: $o) { id } }',
          { n: nodeId, o: { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true, gracePeriodSeconds: 0 } },
          token,
        );
        await finished;
        const run = (await gql<{ removalRuns: Array<{ status: string; reason: string | null }> }>('query($n: ID!) { removalRuns(nodeId: $n) { status reason } }', { n: nodeId }, token)).removalRuns.at(-1);
        if (run?.status !== 'SUCCEEDED' || podsOn(sim, ours) !== 0) {
          throw new Error(`removeNode did not succeed: ${JSON.stringify(run)}; ${podsOn(sim, ours)} pods left`);
        }

        const t = performance.now();
        const drained = await kubectl(env, ['drain', theirs, '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--grace-period=0']);
        const kubectlDrain = performance.now() - t;
        const deleted = await kubectl(env, ['delete', 'node', theirs]);
        const kubectlTotal = performance.now() - t;
        if (drained.code !== 0 || deleted.code !== 0 || podsOn(sim, theirs) !== 0) {
          throw new Error(`kubectl failed (${drained.code}, ${deleted.code}): ${drained.stderr.slice(0, 500)} ${deleted.stderr.slice(0, 300)}`);
        }
        const total = (marks.total ?? performance.now()) - t0;
        const row = { drain: marks.drain === undefined ? total : marks.drain - t0, total, kubectlDrain, kubectlTotal };
        rows.push(row);
        log(
          `round ${round + 1}: removeNode drained in ${row.drain.toFixed(0).padStart(6)} ms, removed in ${row.total.toFixed(0).padStart(6)} ms (${events} events streamed)   ` +
            `kubectl drain ${row.kubectlDrain.toFixed(0).padStart(6)} ms, + delete node ${row.kubectlTotal.toFixed(0).padStart(6)} ms   ratio kubectl/removeNode ${(row.kubectlTotal / row.total).toFixed(2)}`,
        );
      }
      const drain = median(rows.map((row) => row.drain));
      const total = median(rows.map((row) => row.total));
      const kubectlDrain = median(rows.map((row) => row.kubectlDrain));
      const kubectlTotal = median(rows.map((row) => row.kubectlTotal));
      log(
        `median, ${PODS} pods: removeNode ${total.toFixed(0)} ms (drain ${drain.toFixed(0)} ms); kubectl drain + delete node ${kubectlTotal.toFixed(0)} ms (drain ${kubectlDrain.toFixed(0)} ms); ` +
          `ratio kubectl/removeNode ${(kubectlTotal / total).toFixed(2)} (drain only ${(kubectlDrain / drain).toFixed(2)})`,
      );
      figures.push({ pods: PODS, drain, total, kubectlDrain, kubectlTotal });
    }
    return figures;
  } finally {
    await ws.dispose();
    await api.close();
    await sim.stop();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  measureRemoval((process.argv[2] ?? '300').split(',').map(Number), Number(process.argv[3] ?? 1), (line) => console.log(line)).then(
    () => undefined,
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
