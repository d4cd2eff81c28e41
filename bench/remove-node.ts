/**
 * removeNode through the GraphQL API against the seed's manual procedure with the real kubectl,
 * on one kube-sim: two nodes seeded alike with N ReplicaSet-owned pods each (budgets on half of
 * them, all allowing the evictions). One is removed with removeNode (force, deleteEmptyDirData,
 * ignoreDaemonSets, gracePeriodSeconds 0), timed from the mutation until the removalProgress
 * subscription reports the drain finished and the run finished; then the other is drained with
 * `kubectl drain --ignore-daemonsets --delete-emptydir-data --force --grace-period=0` and deleted
 * with `kubectl delete node`. Repeated for a few rounds on fresh nodes.
 *
 *   npx tsx bench/remove-node.ts [podsPerNode=300] [rounds=1]
 *
 * The API runs in this process (started as `npm start` does, on a fresh database of the Postgres
 * server at 127.0.0.1:5432) and so does kube-sim, as in bench/drain.ts: the API and the API server
 * share this process's CPU while kubectl has a process of its own. The removal records every
 * eviction as an event (written in batches) and publishes it to subscribers. Prints figures; not
 * part of the test suite.
 */
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestDatabase } from '@ccos/api/data-access-db/testing';
import { startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';
import { loadConfig } from '../apps/api/src/app/config';
import { startApi } from '../apps/api/src/app/start-api';

const PODS = Number(process.argv[2] ?? 300);
const ROUNDS = Number(process.argv[3] ?? 1);
const REPLICA_SETS = 10;
const KUBECTL = '/usr/bin/kubectl';
const ADMIN_PASSWORD = 'bench-admin-password';

function kubectl(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, args, { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** One worker node with PODS pods of REPLICA_SETS ReplicaSets; budgets on half of them, all allowing the drain. */
function seedNode(sim: KubeSim, node: string): void {
  const res = (name: string) => sim.resource(name);
  sim.api.seed(res('nodes'), {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: node, labels: { 'node-role.kubernetes.io/worker': '' } },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  for (let r = 0; r < REPLICA_SETS; r++) {
    const app = `${node}-app-${r}`;
    const perSet = Math.ceil(PODS / REPLICA_SETS);
    const rs = sim.api.seed(res('replicasets'), {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: app, namespace: 'bench' },
      spec: { replicas: perSet, selector: { matchLabels: { app } }, template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'app' }] } } },
    });
    if (r % 2 === 0) {
      sim.api.seed(res('poddisruptionbudgets'), {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: `${app}-budget`, namespace: 'bench' },
        spec: { ...(r % 4 === 0 ? { minAvailable: 0 } : { maxUnavailable: '100%' }), selector: { matchLabels: { app } } },
      });
    }
    for (let p = 0; p < perSet && r * perSet + p < PODS; p++) {
      sim.api.seed(res('pods'), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${app}-${p}`,
          namespace: 'bench',
          labels: { app },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: app, uid: rs.metadata.uid ?? '', controller: true }],
        },
        spec: { nodeName: node, terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'app' }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      });
    }
  }
}

function podsOn(sim: KubeSim, node: string): number {
  return sim.store.list(sim.resource('pods'), { nodeName: node }).length;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-remove-node-'));
  const database = await createTestDatabase('ccos_bench');
  const sim = await startKubeSim({ watchCacheSize: 5000, orphanedPodGcSeconds: -1 });
  const config = await loadConfig({ DATABASE_URL: database.url, SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop', ADMIN_PASSWORD, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn' });
  const api = await startApi(config, { logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
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
    console.log(`kube-sim ${sim.url}; ${PODS} pods per node, ${REPLICA_SETS} ReplicaSets (${REPLICA_SETS / 2} with PDBs), ${ROUNDS} rounds; removeNode through the API vs kubectl drain + kubectl delete node`);

    const rows: Array<{ drain: number; total: number; kubectlDrain: number; kubectlTotal: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ours = `round${round}-ours`;
      const theirs = `round${round}-kubectl`;
      seedNode(sim, ours);
      seedNode(sim, theirs);
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
      console.log(
        `round ${round + 1}: removeNode drained in ${row.drain.toFixed(0).padStart(6)} ms, removed in ${row.total.toFixed(0).padStart(6)} ms (${events} events streamed)   ` +
          `kubectl drain ${row.kubectlDrain.toFixed(0).padStart(6)} ms, + delete node ${row.kubectlTotal.toFixed(0).padStart(6)} ms   ratio kubectl/removeNode ${(row.kubectlTotal / row.total).toFixed(2)}`,
      );
    }
    const drain = median(rows.map((row) => row.drain));
    const total = median(rows.map((row) => row.total));
    const kubectlDrain = median(rows.map((row) => row.kubectlDrain));
    const kubectlTotal = median(rows.map((row) => row.kubectlTotal));
    console.log(
      `median: removeNode ${total.toFixed(0)} ms (drain ${drain.toFixed(0)} ms); kubectl drain + delete node ${kubectlTotal.toFixed(0)} ms (drain ${kubectlDrain.toFixed(0)} ms); ` +
        `ratio kubectl/removeNode ${(kubectlTotal / total).toFixed(2)} (drain only ${(kubectlDrain / drain).toFixed(2)})`,
    );
  } finally {
    await ws.dispose();
    await api.close();
    await sim.stop();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
