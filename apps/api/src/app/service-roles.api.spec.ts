import 'reflect-metadata';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness, writeStandInArtifactSet } from '../testing/api-test-harness';

const ADD = 'mutation($input: AddNodeInput!) { addNode(input: $input) { id status } }';
const NODE = 'query($id: ID!) { node(id: $id) { status } }';
const PROVISION_LOG = 'connecting over SSH to add the node';

/** The value of `ccos_jobs{state="…"}` on a metrics page, or null when the series is missing. */
function jobsIn(metrics: string, state: string): number | null {
  const line = metrics.split('\n').find((row) => row.startsWith(`ccos_jobs{state="${state}"}`));
  return line === undefined ? null : Number(line.split(' ').at(-1));
}

describe('SERVICE_ROLE: an api process queues jobs, a worker process runs them', () => {
  let sim: KubeSim;
  let api: ApiHarness;
  let worker: ApiHarness | null = null;
  let clusterId = '';
  let operator = '';
  let env: Record<string, string> = {};
  const startWorker = async (): Promise<ApiHarness> => {
    worker = await startApiHarness({ ...env, SERVICE_ROLE: 'worker' }, { database: api.database });
    return worker;
  };

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    // Any file serves as the agent: the host is a loopback port nobody listens on, so its checks end UNREACHABLE without leaving the machine.
    env = { AGENT_BINARY: '/bin/true', SSH_CONNECT_TIMEOUT_MS: '1000', AGENT_API_URL: 'https://127.0.0.1:4443', ARTIFACTS_DIR: await writeStandInArtifactSet(await mkdtemp(join(tmpdir(), 'ccos-roles-artifacts-'))) };
    api = await startApiHarness({ ...env, SERVICE_ROLE: 'api' });
    clusterId = await api.registerSimCluster(sim);
    operator = await api.tokenFor('OPERATOR');
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.stop();
    await sim?.stop();
  });

  it('a node added through the api waits, queued, until a worker runs its checks; only the worker connects to the host', async () => {
    const added = await api.gql<{ addNode: { id: string; status: string } }>(
      ADD,
      { input: { clusterId, hostname: 'w-roles', ip: '127.0.0.71', sshPort: 1, sshUser: 'root', password: 'role-split-password-1' } },
      operator,
    );
    const nodeId = added.data?.addNode.id ?? '';
    expect(added.data?.addNode.status).toBe('ADDING');
    const metrics = async (url: string) => (await fetch(`${url}/metrics`)).text();
    await expect.poll(async () => jobsIn(await metrics(api.url), 'waiting'), { timeout: 15_000 }).toBe(1);

    const running = await startWorker();
    await expect.poll(async () => (await api.gql<{ node: { status: string } }>(NODE, { id: nodeId }, operator)).data?.node.status, { timeout: 30_000, interval: 100 }).toBe('UNREACHABLE');
    expect(running.logs.filter((line) => line.includes(PROVISION_LOG) && line.includes(nodeId))).toHaveLength(1);
    expect(api.logs.filter((line) => line.includes(PROVISION_LOG))).toEqual([]);
    await expect.poll(async () => jobsIn(await metrics(running.url), 'waiting'), { timeout: 15_000 }).toBe(0);
  });

  it('a worker serves health, readiness and metrics on its port and nothing people or agents use', async () => {
    const running = worker ?? (await startWorker());
    expect(await (await fetch(`${running.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${running.url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    expect(await (await fetch(`${running.url}/metrics`)).text()).toContain('ccos_jobs{state="failed"}');
    for (const path of ['/graphql', '/', '/nodes', '/artifacts/manifest', '/agent/binary']) {
      expect((await fetch(`${running.url}${path}`)).status, path).toBe(404);
    }
    expect((await fetch(`${running.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' })).status).toBe(404);
    expect(running.api.httpsUrl).toBeNull();
    expect(running.logs.some((line) => line.includes('ccos-scaler worker running jobs'))).toBe(true);
  });
});
