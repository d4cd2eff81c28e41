import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScaleOutWorld, approveUntilSettled, startScaleOutWorld } from '../support/scale-out-world';

const NODE = 'query($id: ID!) { node(id: $id) { id hostname status origin hostVerdict { verdict reason cleanedAt leftovers { kind item } } } }';
const NODES = 'query($c: ID!) { nodes(clusterId: $c) { id hostname status origin } }';

interface NodeView {
  id: string;
  hostname: string;
  status: string;
  origin: string;
  hostVerdict: { verdict: string; reason: string; cleanedAt: string | null; leftovers: Array<{ kind: string; item: string }> } | null;
}

/**
 * A host added again while a Node of its name is still in the cluster. The inventory sync
 * shows such a Node as a DISCOVERED record; adding the host used to be refused as a duplicate
 * of it. Now the added record takes the name and the Node is one of the host's leftovers:
 * h1 was a node this service removed (its machine-id says so) → REINSTALL_REQUIRED; h2 had a
 * fresh OS install but its old Node object stayed → CLEANABLE, and joins once an operator
 * confirmed the cleanup (which deletes that Node). Neither joins silently.
 */
describe('a removed host added again while its Node object is still in the cluster', () => {
  let world: ScaleOutWorld;
  const node = async (id: string) => (await world.gql<{ node: NodeView }>(NODE, { id })).data?.node as NodeView;
  const records = async (hostname: string) =>
    ((await world.gql<{ nodes: Array<{ id: string; hostname: string; status: string; origin: string }> }>(NODES, { c: world.clusterId })).data?.nodes ?? []).filter((record) => record.hostname === hostname);
  const clusterNode = (name: string) => (world.sim.store.list(world.sim.resource('nodes')) as unknown as Array<{ metadata: { name: string } }>).find((found) => found.metadata.name === name);
  /** The Node a kubelet of the host's earlier membership registered and nobody deleted (not Ready: that kubelet is gone). */
  const leaveNode = (name: string, ip: string) =>
    world.sim.api.seed(world.sim.resource('nodes'), {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'node-role.kubernetes.io/worker': '' } },
      status: { addresses: [{ type: 'InternalIP', address: ip }], conditions: [{ type: 'Ready', status: 'Unknown' }] },
    });

  beforeAll(async () => {
    world = await startScaleOutWorld({ hosts: 2, name: 'readded-host-with-node' });
    const [h1, h2] = world.lab.hosts;
    // h1 was node h1 of this cluster, removed by this service (the record a removal leaves, with the host's machine-id).
    const machineId = (await world.lab.exec('h1', ['cat', '/etc/machine-id'])).stdout.trim();
    const db = new pg.Client({ connectionString: world.api.database?.url });
    await db.connect();
    await db.query(
      `INSERT INTO nodes (id, cluster_id, hostname, ip, status, status_reason, origin, ever_joined, facts)
       VALUES (gen_random_uuid(), $1, 'h1', $2, 'REMOVED', 'removed', 'ADDED', true, $3)`,
      [world.clusterId, h1.ip, JSON.stringify({ machineId })],
    );
    await db.end();
    leaveNode('h1', h1.ip);
    leaveNode('h2', h2.ip);
    // A Node of another machine, elsewhere.
    leaveNode('spare', '198.18.0.250');
    // The inventory sync shows each as a DISCOVERED record (what used to make the add a duplicate).
    const started = Date.now();
    for (const name of ['h1', 'h2', 'spare']) {
      while (!(await records(name)).some((record) => record.status === 'JOINED' && record.origin === 'DISCOVERED')) {
        if (Date.now() - started > 30_000) {
          throw new Error(`no DISCOVERED record of ${name} after 30 s: ${JSON.stringify(await records(name))}`);
        }
        await new Promise((wake) => setTimeout(wake, 200));
      }
    }
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('h1 (addNode): no duplicate error; REINSTALL_REQUIRED listing the removed machine and the Node; install refused; the Node shown once', async () => {
    // h1 was removed after it joined: its old machine may still hold certificates for the name, so
    // adding it again takes an ADMIN's acknowledgement (the token here is the admin's).
    await expect(world.addHost(0)).rejects.toThrow(/OLD_CERTIFICATES_MAY_BE_VALID/);
    const id = await world.addHost(0, { acknowledgeOldCertificates: true });
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000);
    const view = await node(id);
    expect(view.hostVerdict).toMatchObject({ verdict: 'REINSTALL_REQUIRED', reason: 'this host was a node this service removed; it rejoins only after a fresh OS install' });
    expect(view.hostVerdict?.leftovers.map((leftover) => leftover.kind).sort()).toEqual(['CLUSTER_NODE', 'REMOVED_MACHINE']);
    expect(view.hostVerdict?.leftovers).toContainEqual({ kind: 'CLUSTER_NODE', item: 'Node/h1 (not Ready)' });
    const install = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id });
    expect(install.errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', verdict: 'REINSTALL_REQUIRED' });
    expect((await world.gql('mutation($id: ID!) { cleanHost(nodeId: $id) { id } }', { id })).errors?.[0]?.message).toMatch(/fresh OS install; cleanup cannot make it safe/);
    // The Node is still there, and the inventory shows that name through the added record only.
    expect(clusterNode('h1')).toBeTruthy();
    const active = async () => (await records('h1')).filter((record) => record.status !== 'REMOVED');
    expect(await active()).toEqual([{ id, hostname: 'h1', status: 'READY_TO_INSTALL', origin: 'ADDED' }]);
    expect((await records('h1')).filter((record) => record.origin === 'DISCOVERED').map((record) => record.status)).toEqual(['REMOVED']);
  }, 180_000);

  it('h2 (addNodes): CLEANABLE listing exactly its Node; cleanHost deletes the Node; then, and only then, it installs and joins', async () => {
    const [, h2] = world.lab.hosts;
    const added = await world.gql<{ addNodes: { batch: { id: string } | null; rows: Array<{ hostname: string; nodeId: string | null; problems: Array<{ message: string }> }> } }>(
      'mutation($input: AddNodesInput!) { addNodes(input: $input) { batch { id } rows { hostname nodeId problems { message } } } }',
      { input: { clusterId: world.clusterId, list: `h2 ${h2.ip}`, password: h2.password } },
    );
    expect(added.errors).toBeUndefined();
    expect(added.data?.addNodes.rows.map((row) => row.problems)).toEqual([[]]);
    const id = added.data?.addNodes.rows[0]?.nodeId ?? '';
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000);
    const view = await node(id);
    expect(view.hostVerdict?.verdict).toBe('CLEANABLE');
    expect(view.hostVerdict?.leftovers).toEqual([{ kind: 'CLUSTER_NODE', item: 'Node/h2 (not Ready)' }]);
    const refused = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id });
    expect(refused.errors?.[0]?.extensions?.['code']).toBe('FAILED_PRECONDITION');
    expect(refused.errors?.[0]?.message).toMatch(/leftovers of an earlier membership/);
    expect(clusterNode('h2')).toBeTruthy();

    const cleaned = await world.gql<{ cleanHost: NodeView }>('mutation($id: ID!) { cleanHost(nodeId: $id) { hostVerdict { verdict cleanedAt } } }', { id });
    expect(cleaned.errors).toBeUndefined();
    expect(cleaned.data?.cleanHost.hostVerdict?.cleanedAt).toBeTruthy();
    expect(clusterNode('h2')).toBeUndefined();
    const started = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id });
    expect(started.errors).toBeUndefined();
    const settled = await approveUntilSettled(world, [id], ['JOINED', 'INSTALL_FAILED', 'STALLED'], 240_000);
    expect(settled.statuses[id]).toBe('JOINED');
    expect((await records('h2')).filter((record) => record.status !== 'REMOVED')).toEqual([{ id, hostname: 'h2', status: 'JOINED', origin: 'ADDED' }]);
  }, 360_000);

  it('a Node of that name at another address is another machine: the add is refused, saying so, and nothing changes', async () => {
    const [h1] = world.lab.hosts;
    const before = await records('spare');
    const added = await world.gql('mutation($input: AddNodeInput!) { addNode(input: $input) { id } }', {
      input: { clusterId: world.clusterId, hostname: 'spare', ip: '198.18.0.251', sshPort: h1.port, sshUser: h1.user, password: h1.password },
    });
    expect(added.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
    expect(added.errors?.[0]?.message).toBe('input.hostname "spare" is a Node found in the cluster at 198.18.0.250, not at 198.18.0.251: give the host another name, or remove that Node first');
    expect(await records('spare')).toEqual(before);
  });
});
