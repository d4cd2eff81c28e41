import { type Server, type Socket, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, startApiProcess } from '../support/api-process';

const PROVISION_LOG = 'connecting over SSH to add the node';
/** Loopback addresses of their own: hosts that take a second to hang up, and one that never says a word. */
const BUSY_HOSTS = Array.from({ length: 30 }, (_, index) => `127.0.1.${index + 1}`);
const HANG_UP_MS = 1000;
const SILENT_HOST = '127.0.0.72';

interface FakeHost {
  readonly server: Server;
  readonly accepted: Array<{ at: number; socket: Socket }>;
}

/** A TCP port at `address` that accepts and, after `hangUpAfterMs` (never when null), closes without a word of SSH. */
async function fakeHost(address: string, port: number, hangUpAfterMs: number | null): Promise<FakeHost & { port: number }> {
  const accepted: FakeHost['accepted'] = [];
  const server = createServer((socket) => {
    accepted.push({ at: Date.now(), socket });
    socket.on('error', () => undefined);
    if (hangUpAfterMs !== null) {
      setTimeout(() => socket.destroy(), hangUpAfterMs).unref();
    }
  });
  await new Promise<void>((listening) => server.listen(port, address, listening));
  return { server, accepted, port: (server.address() as { port: number }).port };
}

/**
 * SERVICE_ROLE=api and SERVICE_ROLE=worker processes of the built service on one Postgres: the api
 * queues the hosts' checks, the workers share them out, and a worker killed with SIGKILL in the
 * middle of a job has it run by another, with nobody retrying it by hand.
 */
describe('api and worker processes: jobs spread over the workers, and survive a worker killed mid-job', () => {
  let sim: KubeSim;
  let api: ApiProcess;
  const workers: ApiProcess[] = [];
  const hosts: FakeHost[] = [];
  let busyPort = 0;
  let silent: FakeHost & { port: number };
  let token = '';
  let clusterId = '';

  beforeAll(async () => {
    const first = await fakeHost(BUSY_HOSTS[0], 0, HANG_UP_MS);
    busyPort = first.port;
    hosts.push(first, ...(await Promise.all(BUSY_HOSTS.slice(1).map((address) => fakeHost(address, busyPort, HANG_UP_MS)))));
    silent = await fakeHost(SILENT_HOST, 0, null);
    hosts.push(silent);
    [api, sim] = await Promise.all([startApiProcess({ env: { SERVICE_ROLE: 'api' } }), startKubeSim({ seed: SHIPPED_RBAC })]);
    // One job at a time each (the share of each then depends on nothing but how long a job takes), and
    // a host connection that outlives the test unless the host hangs up or the process dies.
    for (let index = 0; index < 3; index++) {
      workers.push(await startApiProcess({ database: api.database ?? undefined, env: { SERVICE_ROLE: 'worker', JOB_CONCURRENCY: '1', SSH_CONNECT_TIMEOUT_MS: '120000', AGENT_API_URL: api.url.replace('http:', 'https:') } }));
    }
    token = await api.login();
    const registered = await api.gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name: 'workers', apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig: shippedIdentityKubeconfig(sim) } },
      token,
    );
    expect(registered.errors).toBeUndefined();
    clusterId = registered.data?.registerCluster.id ?? '';
  }, 180_000);
  afterAll(async () => {
    for (const worker of workers) {
      await worker.stop();
    }
    await api?.stop();
    await sim?.stop();
    for (const { server, accepted } of hosts) {
      accepted.forEach(({ socket }) => socket.destroy());
      await new Promise((closed) => server.close(closed));
    }
  });

  const status = async (nodeId: string) => (await api.gql<{ node: { status: string } }>('query($id: ID!) { node(id: $id) { status } }', { id: nodeId }, token)).data?.node.status;
  const provisionedBy = (process: ApiProcess, nodeId?: string) => process.output().split('\n').filter((line) => line.includes(PROVISION_LOG) && (nodeId === undefined || line.includes(nodeId))).length;

  it('30 hosts added at once: each of 3 workers checks between a quarter and two fifths of them, the api none', async () => {
    const added = await api.gql<{ addNodes: { added: number; rows: Array<{ nodeId: string | null }> } }>(
      'mutation($input: AddNodesInput!) { addNodes(input: $input) { added rows { nodeId } } }',
      { input: { clusterId, password: 'worker-role-password-1', rows: BUSY_HOSTS.map((ip, index) => ({ hostname: `busy-${index + 1}`, ip, sshPort: busyPort })) } },
      token,
    );
    expect(added.data?.addNodes.added).toBe(30);
    const nodeIds = added.data?.addNodes.rows.map((row) => row.nodeId ?? '') ?? [];
    await expect.poll(async () => (await Promise.all(nodeIds.map(status))).filter((value) => value === 'ADDING').length, { timeout: 90_000, interval: 500 }).toBe(0);
    const shares = workers.map((worker) => provisionedBy(worker));
    expect(shares.reduce((sum, share) => sum + share, 0)).toBe(30);
    for (const share of shares) {
      expect(share, `jobs per worker: ${shares.join(', ')}`).toBeGreaterThanOrEqual(30 / 4);
      expect(share, `jobs per worker: ${shares.join(', ')}`).toBeLessThanOrEqual((30 * 2) / 5);
    }
    expect(provisionedBy(api)).toBe(0);
  });

  it('the job of a worker killed with SIGKILL is unlocked within the stale time and run by another worker', async () => {
    const added = await api.gql<{ addNode: { id: string } }>(
      'mutation($input: AddNodeInput!) { addNode(input: $input) { id } }',
      { input: { clusterId, hostname: 'w-silent', ip: SILENT_HOST, sshPort: silent.port, sshUser: 'root', password: 'worker-kill-password-1' } },
      token,
    );
    expect(added.errors).toBeUndefined();
    const nodeId = added.data?.addNode.id ?? '';
    // One worker is waiting on the host's banner when it dies.
    await expect.poll(() => silent.accepted.length, { timeout: 30_000 }).toBe(1);
    const doomed = workers.find((worker) => provisionedBy(worker, nodeId) === 1);
    expect(doomed).toBeDefined();
    await doomed?.kill(true);
    const killedAt = Date.now();
    await expect.poll(() => silent.accepted.length, { timeout: 45_000 }).toBe(2);
    // graphile-worker alone would keep it locked for four hours; the heartbeats make it 20 s (plus a beat and a poll).
    expect(silent.accepted[1].at - killedAt).toBeLessThan(35_000);
    const survivors = workers.filter((worker) => worker !== doomed);
    // The survivor logs before it connects, but its output reaches this process through a pipe that may lag the accept.
    await expect.poll(() => survivors.map((worker) => provisionedBy(worker, nodeId)).sort(), { timeout: 10_000 }).toEqual([0, 1]);
    await expect.poll(() => survivors.some((worker) => worker.output().includes('unlocked the jobs of workers that stopped beating')), { timeout: 10_000 }).toBe(true);
    // The host hangs up: the check ends, on the worker that took it over.
    silent.accepted[1].socket.destroy();
    await expect.poll(() => status(nodeId), { timeout: 30_000 }).not.toBe('ADDING');
    expect(provisionedBy(api)).toBe(0);
  });
});
