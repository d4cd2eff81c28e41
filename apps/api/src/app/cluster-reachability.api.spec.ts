import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatServerText } from '@ccos/shared/messages';
// The API's specs run against the in-process Kubernetes API simulator.
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const SEED = `
apiVersion: v1
kind: Node
metadata: {name: w1, labels: {node-role.kubernetes.io/worker: ""}}
status: {conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Node
metadata: {name: w2, labels: {node-role.kubernetes.io/worker: ""}}
status: {conditions: [{type: Ready, status: "True"}]}
`;

const CSRS = 'query($c: ID!) { csrs(clusterId: $c) { name } }';
const PREVIEW = 'query($c: ID!) { csrPolicyPreview(clusterId: $c) { csrName } }';
const REMOVAL_PREVIEW = 'query($n: ID!) { removalPreview(nodeId: $n) { nodeName allowed } }';

/** Reads of a cluster that does not answer must come back this fast, each time. */
const BOUND_MS = 2_500;

describe('reads of a cluster that does not answer', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let stateDir: string;
  let viewer: string;
  let clusterId: string;
  let nodeId: string;

  const timed = async (query: string, variables: Record<string, unknown>) => {
    const started = performance.now();
    const result = await harness.gql(query, variables, viewer);
    return { ms: performance.now() - started, result };
  };

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'ccos-reachability-'));
    sim = await startKubeSim({ seed: SEED, stateDir });
    harness = await startApiHarness();
    viewer = await harness.tokenFor('VIEWER');
    // The admin's kubeconfig: the simulator is restarted below, and its service-account token keys
    // do not survive a restart (a real API server's do), while its CA and client certificates do.
    clusterId = await harness.registerSimCluster(sim, { kubeconfig: sim.kubeconfig });
  });

  afterAll(async () => {
    await harness?.stop();
    await sim?.stop();
    await rm(stateDir, { recursive: true, force: true });
  });

  it('answers CLUSTER_UNREACHABLE within 2.5 s, every time, while the API server is down, and recovers when it is back', async () => {
    const listNodes = async () =>
      (await harness.gql<{ nodes: Array<{ id: string; hostname: string }> }>('query($c: ID!) { nodes(clusterId: $c) { id hostname } }', { c: clusterId }, viewer)).data?.nodes ?? [];
    await expect.poll(async () => (await listNodes()).length, { timeout: 10_000 }).toBe(2);
    nodeId = (await listNodes()).find((node) => node.hostname === 'w1')?.id ?? '';
    expect((await timed(CSRS, { c: clusterId })).result.errors).toBeUndefined();
    expect((await timed(REMOVAL_PREVIEW, { n: nodeId })).result.data).toEqual({ removalPreview: { nodeName: 'w1', allowed: true } });
    await sim.stop({ holdPort: true });

    const timings: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (const [query, variables] of [
        [CSRS, { c: clusterId }],
        [PREVIEW, { c: clusterId }],
        [REMOVAL_PREVIEW, { n: nodeId }],
      ] as const) {
        const { ms, result } = await timed(query, variables);
        timings.push(ms);
        expect(result.errors?.[0]?.extensions?.['code'], JSON.stringify(result.errors)).toBe('CLUSTER_UNREACHABLE');
        expect(result.errors?.[0]?.message).toMatch(/^(cannot read the Node w1 and its pods: )?cluster sim is unreachable: .+ \(for \d+ s; the next try is in \d+ s\)\. Check that its API server is up/);
        expect(ms).toBeLessThan(BOUND_MS);
      }
    }
    // Most reads are answered from memory, not by trying the cluster again.
    expect(timings.filter((ms) => ms < 200).length).toBeGreaterThan(timings.length / 2);

    sim = await startKubeSim({ seed: SEED, stateDir, replacing: sim });
    await expect.poll(async () => (await timed(CSRS, { c: clusterId })).result.errors, { timeout: 20_000, interval: 250 }).toBeUndefined();
    expect((await timed(REMOVAL_PREVIEW, { n: nodeId })).result.data).toEqual({ removalPreview: { nodeName: 'w1', allowed: true } });
  });

  describe('an API server that accepts connections and never answers', () => {
    let silent: Server;
    let silentId: string;

    beforeAll(async () => {
      // A blackhole at the application level: TCP connects, TLS never starts.
      silent = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const address = silent.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const registered = await harness.gql<{ registerCluster: { id: string } }>(
        'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
        { i: { name: 'silent', apiServerUrl: `https://127.0.0.1:${port}`, vip: '198.18.0.2', kubeconfig: sim.kubeconfig } },
        await harness.tokenFor('ADMIN'),
      );
      silentId = registered.data?.registerCluster.id ?? '';
      expect(silentId).not.toBe('');
    });

    afterAll(() => {
      silent?.close();
    });

    it('answers CLUSTER_UNREACHABLE within 2.5 s, each of several reads in a row', async () => {
      for (let round = 0; round < 5; round++) {
        const { ms, result } = await timed(round % 2 === 0 ? CSRS : PREVIEW, { c: silentId });
        expect(result.errors?.[0]?.extensions?.['code'], JSON.stringify(result.errors)).toBe('CLUSTER_UNREACHABLE');
        expect(result.errors?.[0]?.message).toMatch(/^cluster silent is unreachable: /);
        const chinese = formatServerText('zh-CN', result.errors?.[0]?.extensions?.['messageCode'] as string, result.errors?.[0]?.extensions?.['messageParams'], null);
        expect(chinese).toMatch(/^无法连接集群 silent：.+（已持续 \d+ 秒；\d+ 秒后重试）。请检查其 API 服务器是否在运行/);
        expect(ms).toBeLessThan(BOUND_MS);
      }
    });
  });
});
