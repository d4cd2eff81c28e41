import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScaleOutWorld, approveUntilSettled, startScaleOutWorld } from '../support/scale-out-world';

const run = promisify(execFile);
const CLI = resolve('dist/apps/cli/ccos-scaler.mjs');
const NODE = `query($id: ID!) { node(id: $id) { id hostname status statusReason batchPhase nextStepCode availableActions hostVerdict { verdict reason cleanedAt leftovers { kind item name } } } }`;

interface NodeView {
  id: string;
  hostname: string;
  status: string;
  statusReason: string | null;
  batchPhase: string | null;
  nextStepCode: string | null;
  availableActions: string[];
  hostVerdict: { verdict: string; reason: string; cleanedAt: string | null; leftovers: Array<{ kind: string; item: string }> } | null;
}

/** A host that was a node before, one leftover kind per host (h1 … h6), and a fresh one (h7). */
describe('dirty-host verdicts: a host that was a node before is never joined silently', () => {
  let world: ScaleOutWorld;
  let dir = '';
  const ids = new Map<string, string>();
  let batchId = '';

  const plant = async (host: string, path: string, content = 'leftover\n') => {
    const result = await world.lab.exec(host, ['sh', '-c', 'mkdir -p "$(dirname "$1")" && printf %s "$2" > "$1"', 'plant', path, content]);
    expect(result.code).toBe(0);
  };
  // lab.exec refuses a non-zero exit, so the shell answers yes or no.
  const exists = async (host: string, path: string) => (await world.lab.exec(host, ['sh', '-c', 'if [ -e "$1" ]; then echo yes; else echo no; fi', 'exists', path])).stdout.trim() === 'yes';
  const node = async (id: string) => (await world.gql<{ node: NodeView }>(NODE, { id })).data?.node as NodeView;

  beforeAll(async () => {
    // Auto-approve off: the CSR planted for h5 stays pending until the operator's cleanup deletes it.
    world = await startScaleOutWorld({ hosts: 7, name: 'dirty-hosts' });
    dir = await mkdtemp(join(tmpdir(), 'dirty-host-'));
    await plant('h1', '/var/lib/kubelet/pki/kubelet-client-current.pem');
    await plant('h2', '/etc/kubernetes/kubelet.conf');
    await plant('h3', '/etc/kubernetes/manifests/old-static-pod.yaml');
    await plant('h4', '/etc/systemd/system/kubelet.service', '[Unit]\nDescription=old kubelet\n[Service]\nExecStart=/bin/sleep 100000\n[Install]\nWantedBy=multi-user.target\n');
    expect((await world.lab.exec('h4', ['systemctl', 'daemon-reload'])).code).toBe(0);
    expect((await world.lab.exec('h4', ['systemctl', 'enable', '--now', 'kubelet'])).code).toBe(0);
    // h5: a pending CSR for its node name left in the cluster.
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, world.sim.kubeconfig);
    await run('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/O=system:nodes/CN=system:node:h5', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'csr.pem')]);
    const request = (await readFile(join(dir, 'csr.pem'))).toString('base64');
    await writeFile(join(dir, 'csr.json'), JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'csr-left-by-h5' },
      spec: { request, signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
    }));
    await run('/usr/bin/kubectl', ['--kubeconfig', kubeconfig, 'create', '-f', join(dir, 'csr.json')]);
    // h6: its machine-id is the one of a node this service removed earlier (a record as the removal leaves it).
    const machineId = (await world.lab.exec('h6', ['cat', '/etc/machine-id'])).stdout.trim();
    const db = new pg.Client({ connectionString: world.api.database?.url });
    await db.connect();
    await db.query(
      `INSERT INTO nodes (id, cluster_id, hostname, ip, status, status_reason, origin, ever_joined, facts)
       VALUES (gen_random_uuid(), $1, 'old-h6', '198.18.0.254', 'REMOVED', 'removed', 'ADDED', true, $2)`,
      [world.clusterId, JSON.stringify({ machineId })],
    );
    await db.end();

    const added = await world.gql<{ addNodes: { batch: { id: string } | null; rows: Array<{ hostname: string; nodeId: string | null; problems: unknown[] }> } }>(
      'mutation($input: AddNodesInput!) { addNodes(input: $input) { batch { id } rows { hostname nodeId problems { field message } } } }',
      { input: { clusterId: world.clusterId, list: world.lab.hosts.map((host) => `${host.hostname} ${host.ip}`).join('\n'), password: world.lab.hosts[0].password } },
    );
    expect(added.errors).toBeUndefined();
    batchId = added.data?.addNodes.batch?.id ?? '';
    for (const row of added.data?.addNodes.rows ?? []) {
      ids.set(row.hostname, row.nodeId ?? '');
    }
    await Promise.all([...ids.values()].map((id) => world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000)));
  }, 400_000);
  afterAll(async () => {
    await world?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['h1', 'KUBELET_CERTIFICATES', '/var/lib/kubelet/pki/kubelet-client-current.pem'],
    ['h2', 'KUBECONFIG', '/etc/kubernetes/kubelet.conf'],
    ['h3', 'KUBERNETES_FILES', '/etc/kubernetes/manifests/old-static-pod.yaml'],
    ['h4', 'KUBELET_SERVICE', 'kubelet.service (enabled)'],
    ['h5', 'CLUSTER_CSRS', 'CertificateSigningRequest/csr-left-by-h5'],
  ])('%s: %s leftovers make it CLEANABLE, listing %s, and its install is refused', async (hostname, kind, item) => {
    const view = await node(ids.get(hostname) ?? '');
    expect(view.hostVerdict?.verdict).toBe('CLEANABLE');
    // Cluster objects carry their name beside the shown item: cleanup acts on the name.
    expect(view.hostVerdict?.leftovers).toContainEqual({ kind, item, name: kind === 'CLUSTER_CSRS' ? 'csr-left-by-h5' : null });
    expect(view.hostVerdict?.leftovers.every((leftover) => leftover.kind === kind)).toBe(true);
    // The next step, the actions and the install agree: clean first.
    expect(view.nextStepCode).toBe('node.next.CLEAN_HOST');
    expect(view.availableActions).toContain('CLEAN_HOST');
    expect(view.availableActions).not.toContain('INSTALL');
    const install = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: view.id });
    expect(install.errors?.[0]?.extensions?.['code']).toBe('FAILED_PRECONDITION');
    expect(install.errors?.[0]?.message).toMatch(/leftovers of an earlier membership/);
  });

  it('h6: the machine-id of a removed node means REINSTALL_REQUIRED, which cleanup cannot lift', async () => {
    const view = await node(ids.get('h6') ?? '');
    expect(view.hostVerdict?.verdict).toBe('REINSTALL_REQUIRED');
    expect(view.hostVerdict?.leftovers.map((leftover) => leftover.kind)).toEqual(['REMOVED_MACHINE']);
    expect(view.hostVerdict?.leftovers[0].item).toMatch(/^machine-id \w+ → node\/old-h6 \(/);
    // Not "install" as before: the next step says to reinstall the OS, and neither Install nor Clean host is offered.
    expect(view.nextStepCode).toBe('node.next.REINSTALL_OS');
    expect(view.availableActions).not.toContain('INSTALL');
    expect(view.availableActions).not.toContain('CLEAN_HOST');
    const clean = await world.gql('mutation($id: ID!) { cleanHost(nodeId: $id) { id } }', { id: view.id });
    expect(clean.errors?.[0]?.message).toMatch(/fresh OS install; cleanup cannot make it safe/);
    expect((await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: view.id })).errors?.[0]?.message).toMatch(/fresh OS install/);
  });

  it('in a batch install the clean host joins, the dirty ones wait for an operator; cleanHost removes exactly the listed items and lets it join', async () => {
    expect((await node(ids.get('h7') ?? '')).hostVerdict?.verdict).toBe('CLEAN');
    // h5's cleanup first: the CSR it left must be decided (denied, as a removal does) before the operator approves CSRs below.
    expect((await world.gql('mutation($id: ID!) { cleanHost(nodeId: $id) { id } }', { id: ids.get('h5') })).errors).toBeUndefined();
    const csrs = world.sim.store.list(world.sim.resource('certificatesigningrequests')) as unknown as Array<{ metadata: { name: string }; status?: { conditions?: Array<{ type: string }> } }>;
    expect(csrs.find((csr) => csr.metadata.name === 'csr-left-by-h5')?.status?.conditions?.map((condition) => condition.type)).toEqual(['Denied']);
    // Decided through the one CSR decision path: recorded with the operator who asked for the cleanup, and why.
    const decided = await world.gql<{ csrs: Array<{ name: string; decisions: Array<{ decision: string; actor: string; reason: string }> }> }>(
      'query($c: ID!) { csrs(clusterId: $c) { name decisions { decision actor reason } } }',
      { c: world.clusterId },
    );
    expect(decided.data?.csrs.find((csr) => csr.name === 'csr-left-by-h5')?.decisions).toEqual([
      { decision: 'DENIED', actor: 'admin', reason: 'left pending by an earlier membership of this host; denied by its cleanup' },
    ]);

    const started = await world.gql('mutation($id: ID!) { installBatch(batchId: $id) { id } }', { id: batchId });
    expect(started.errors).toBeUndefined();
    const batch = async () =>
      (await world.gql<{ batch: { progress: { joined: number; waitingForOperator: number }; hosts: Array<{ hostname: string; phase: string }> } }>(
        'query($id: ID!) { batch(id: $id) { progress { joined waitingForOperator } hosts { hostname phase } } }',
        { id: batchId },
      )).data?.batch;
    const first = await approveUntilSettled(world, [ids.get('h7') ?? '', ids.get('h5') ?? ''], ['JOINED', 'INSTALL_FAILED'], 240_000);
    expect(Object.values(first.statuses)).toEqual(['JOINED', 'JOINED']);
    // The batch counts a host joined once its pass has seen the node join, a moment after the node.
    await expect.poll(async () => (await batch())?.progress, { timeout: 30_000 }).toEqual({ joined: 2, waitingForOperator: 5 });

    // The operator confirms h1's and h4's cleanup: the listed files go, the kubelet is stopped and disabled, an unlisted file stays.
    await plant('h1', '/var/lib/kubelet/config.yaml', 'unrelated: true\n');
    const cleaned = await world.gql<{ cleanHost: NodeView }>(`mutation($id: ID!) { cleanHost(nodeId: $id) { hostVerdict { verdict cleanedAt } } }`, { id: ids.get('h1') });
    expect(cleaned.errors).toBeUndefined();
    expect(cleaned.data?.cleanHost.hostVerdict?.cleanedAt).toBeTruthy();
    expect(await exists('h1', '/var/lib/kubelet/pki/kubelet-client-current.pem')).toBe(false);
    expect(await exists('h1', '/var/lib/kubelet/config.yaml')).toBe(true);
    // h4's through the CLI, as an operator's script would: `nodes clean NODE --yes`.
    const byCli = await run(process.execPath, [CLI, 'nodes', 'clean', ids.get('h4') ?? '', '--yes'], {
      env: { PATH: process.env['PATH'] ?? '', HOME: dir, LANG: 'en_US.UTF-8', CCOS_SERVER: world.api.url, CCOS_TOKEN: world.token },
    });
    expect(byCli.stdout.trim()).toBe('Cleaned h4: removed what its earlier membership left (items listed: 2); it can be installed now.');
    expect((await world.lab.exec('h4', ['sh', '-c', 'systemctl is-enabled kubelet || true'])).stdout.trim()).toBe('disabled');

    // Cleaned hosts leave HELD and join through the batch; the others still wait.
    const second = await approveUntilSettled(world, [ids.get('h1') ?? '', ids.get('h4') ?? ''], ['JOINED', 'INSTALL_FAILED'], 240_000);
    expect(Object.values(second.statuses)).toEqual(['JOINED', 'JOINED']);
    await expect.poll(async () => (await batch())?.progress, { timeout: 30_000 }).toEqual({ joined: 4, waitingForOperator: 3 });
    const after = await batch();
    expect(after?.hosts.filter((host) => host.phase === 'HELD').map((host) => host.hostname).sort()).toEqual(['h2', 'h3', 'h6']);
  }, 600_000);

  it('h6: after a fresh OS install (a new machine-id and host key) its record is deleted and it is added again: CLEAN, and Install is offered', async () => {
    const host = world.lab.hosts.find((candidate) => candidate.id === 'h6');
    if (!host) {
      throw new Error('the lab has no h6');
    }
    const oldMachineId = (await world.lab.exec('h6', ['cat', '/etc/machine-id'])).stdout.trim();
    const { machineId } = await world.lab.faults.reinstall('h6');
    expect(machineId).not.toBe(oldMachineId);
    const deleted = await world.gql('mutation($id: ID!) { deleteNodeRecord(nodeId: $id) { id } }', { id: ids.get('h6') });
    expect(deleted.errors).toBeUndefined();
    const added = await world.gql<{ addNode: { id: string } }>('mutation($input: AddNodeInput!) { addNode(input: $input) { id } }', {
      input: { clusterId: world.clusterId, hostname: host.hostname, ip: host.ip, sshPort: host.port, sshUser: host.user, password: host.password },
    });
    expect(added.errors).toBeUndefined();
    const id = added.data?.addNode.id ?? '';
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000);
    const view = await node(id);
    expect(view.hostVerdict?.verdict).toBe('CLEAN');
    expect(view.hostVerdict?.leftovers).toEqual([]);
    expect(view.nextStepCode).toBe('node.next.INSTALL');
    expect(view.availableActions).toContain('INSTALL');
  });
});
