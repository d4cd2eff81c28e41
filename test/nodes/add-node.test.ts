import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../support/graphql-subscriptions';
import { AGENT_EXECUTABLE, type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

const HOSTS = 10;
const ADD = 'mutation($input: AddNodeInput!) { addNode(input: $input) { id status } }';
const NODE = `query($id: ID!) { node(id: $id) {
  id hostname status statusReason nextStep hostKeyFingerprint offeredHostKeyFingerprint agentSha256 sshAuthMethod
  facts { arch osRelease kernel freeDiskBytes cpus cpuModel memoryBytes disks { name sizeBytes rotational } nics { name mac state } } labels { key value }
} }`;

const REINSPECT = 'mutation($n: ID!) { reinspectHost(nodeId: $n) { status facts { inspectedAt changes { field item before after } } } }';

describe('addNode against real SSH hosts', () => {
  let world: ScaleOutWorld;
  let agentSha256: string;

  beforeAll(async () => {
    world = await startScaleOutWorld({ hosts: HOSTS, apiEnv: { SSH_CONNECT_TIMEOUT_MS: '3000' } });
    agentSha256 = createHash('sha256').update(await readFile(AGENT_EXECUTABLE)).digest('hex');
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  const node = async (id: string) => (await world.gql<{ node: Record<string, unknown> & { facts: Record<string, unknown> } }>(NODE, { id })).data?.node;

  it('adds a host with a password: pins its host key, checks it and copies the agent (sha256 verified), live on nodeChanged', async () => {
    const changes = subscribe<{ nodeChanged: { nodeId: string; node: { status: string } | null } }>(
      world.api.url, world.token, 'subscription($c: ID!) { nodeChanged(clusterId: $c) { nodeId node { status } } }', { c: world.clusterId },
    );
    await new Promise((wake) => setTimeout(wake, 500));
    const id = await world.addHost(0, { labels: [{ key: 'disk-type', value: 'ssd' }] });
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 60_000);
    const seen = await changes.until((messages) => messages.some((message) => message.nodeChanged.node?.status === 'READY_TO_INSTALL'), 10_000);
    const statuses = seen.filter((message) => message.nodeChanged.nodeId === id).map((message) => message.nodeChanged.node?.status);
    expect(statuses[0]).toBe('ADDING');
    expect(statuses.at(-1)).toBe('READY_TO_INSTALL');
    await changes.close();
    const added = await node(id);
    expect(added).toMatchObject({
      hostname: 'h1', status: 'READY_TO_INSTALL', sshAuthMethod: 'PASSWORD', agentSha256, hostKeyFingerprint: world.lab.hostKeyFingerprints['h1']?.ed25519,
      labels: [{ key: 'disk-type', value: 'ssd' }],
    });
    expect(added?.facts).toMatchObject({ arch: 'x86_64' });
    expect(added?.facts['freeDiskBytes']).toBeGreaterThan(0);
    // The hardware, as the host's own /proc and /sys tell it.
    const [nproc, memTotal] = await Promise.all([world.lab.exec('h1', ['getconf', '_NPROCESSORS_ONLN']), world.lab.exec('h1', ['grep', '-m1', '^MemTotal:', '/proc/meminfo'])]);
    expect(added?.facts['cpus']).toBe(Number(nproc.stdout.trim()));
    expect(added?.facts['memoryBytes']).toBe(Number(/(\d+) kB/.exec(memTotal.stdout)?.[1]) * 1024);
    const nics = added?.facts['nics'] as Array<{ name: string; mac: string | null; state: string }>;
    expect(nics.map((nic) => nic.name)).not.toContain('lo');
    const hostMac = (await world.lab.exec('h1', ['sh', '-c', 'cat /sys/class/net/*/address'])).stdout.split('\n');
    expect(nics.filter((nic) => nic.mac !== null).every((nic) => hostMac.includes(nic.mac ?? ''))).toBe(true);
    const onHost = await world.lab.exec('h1', ['sha256sum', '/opt/ccos-scaler/boot-worker']);
    expect(onHost.stdout.split(' ')[0]).toBe(agentSha256);
    const version = await world.lab.exec('h1', ['/opt/ccos-scaler/boot-worker', 'version']);
    expect(version.code).toBe(0);

    // Inspected again on request: nothing changed; then a NIC added on the host is named, and the node's status stays.
    const reinspect = async () => {
      const result = await world.gql<{ reinspectHost: { status: string; facts: { inspectedAt: string | null; changes: unknown[] } } }>(REINSPECT, { n: id });
      expect(result.errors).toBeUndefined();
      return result.data?.reinspectHost;
    };
    expect(await reinspect()).toMatchObject({ status: 'READY_TO_INSTALL', facts: { inspectedAt: expect.any(String), changes: [] } });
    await world.lab.exec('h1', ['ip', 'link', 'add', 'ccos-probe0', 'type', 'veth', 'peer', 'name', 'ccos-probe1']);
    try {
      expect((await reinspect())?.facts.changes).toEqual(['ccos-probe0', 'ccos-probe1'].map((item) => ({ field: 'nic', item, before: null, after: expect.stringMatching(new RegExp(`^${item} [0-9a-f:]{17} down$`)) })));
    } finally {
      await world.lab.exec('h1', ['ip', 'link', 'del', 'ccos-probe0']);
    }
  });

  it('adds a host with a private key', async () => {
    const privateKey = await readFile(world.lab.privateKeyPath, 'utf8');
    const id = await world.addHost(1, { password: null, privateKey });
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 60_000);
    expect(await node(id)).toMatchObject({ status: 'READY_TO_INSTALL', sshAuthMethod: 'PRIVATE_KEY' });
  });

  it('ends a wrong password in AUTH_FAILED with a next step, after one login attempt, and recovers with new credentials', async () => {
    const id = await world.addHost(2, { password: 'not-the-password' });
    const failed = await world.waitForStatus(id, ['AUTH_FAILED'], 30_000);
    expect(failed.statusReason).toMatch(/authentication|password|rejected/i);
    await new Promise((done) => setTimeout(done, 3000));
    expect((await node(id))?.['status']).toBe('AUTH_FAILED');
    expect((await node(id))?.['nextStep']).toMatch(/updateNodeCredentials/);
    const attempts = world.api.output().split('\n').filter((line) => line.includes(id) && line.includes('connecting over SSH to add the node'));
    expect(attempts).toHaveLength(1);

    const updated = await world.gql('mutation($id: ID!, $input: SshCredentialsInput!) { updateNodeCredentials(nodeId: $id, input: $input) { status } }', {
      id, input: { sshUser: 'root', password: world.lab.hosts[2].password },
    });
    expect(updated.errors).toBeUndefined();
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 60_000);
  });

  it('ends an unreachable host in UNREACHABLE within the configured timeout', async () => {
    await world.lab.faults.cutLink('h4');
    try {
      const started = Date.now();
      const id = await world.addHost(3);
      const failed = await world.waitForStatus(id, ['UNREACHABLE'], 20_000);
      expect(Date.now() - started).toBeLessThan(3000 + 3000);
      expect(failed.statusReason).toContain(`${world.lab.hosts[3].ip}:22`);
      // A node that never joined can be forgotten.
      const deleted = await world.gql('mutation($id: ID!) { deleteNodeRecord(nodeId: $id) { hostname } }', { id });
      expect(deleted.errors).toBeUndefined();
      const gone = await world.gql('query($id: ID!) { node(id: $id) { id } }', { id });
      expect(gone.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    } finally {
      await world.lab.faults.restoreLink('h4');
    }
  });

  it('refuses a changed host key until an admin accepts exactly the new key', async () => {
    const id = await world.addHost(4);
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 60_000);
    const pinned = (await node(id))?.['hostKeyFingerprint'];
    await world.lab.faults.rekey('h5');
    await world.gql('mutation($id: ID!) { recopyAgent(nodeId: $id) { status } }', { id });
    const changed = await world.waitForStatus(id, ['HOST_KEY_CHANGED'], 30_000);
    const offered = (await node(id))?.['offeredHostKeyFingerprint'];
    expect(offered).toBe((await world.lab.hostKeyFingerprint('h5')).ed25519);
    expect(changed.statusReason).toContain(String(pinned));
    expect(changed.statusReason).toContain(String(offered));

    const wrong = await world.gql('mutation($id: ID!, $f: String!) { acceptHostKey(nodeId: $id, fingerprint: $f) { status } }', { id, f: pinned });
    expect(wrong.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect((await node(id))?.['status']).toBe('HOST_KEY_CHANGED');
    const accepted = await world.gql('mutation($id: ID!, $f: String!) { acceptHostKey(nodeId: $id, fingerprint: $f) { status } }', { id, f: offered });
    expect(accepted.errors).toBeUndefined();
    await world.waitForStatus(id, ['READY_TO_INSTALL'], 60_000);
    expect((await node(id))?.['hostKeyFingerprint']).toBe(offered);
  });

  it.each([
    ['hostname', { hostname: 'h6;touch /tmp/pwned' }, 'input.hostname'],
    ['hostname', { hostname: '$(touch /tmp/pwned)' }, 'input.hostname'],
    ['hostname', { hostname: 'h6\nh7' }, 'input.hostname'],
    ['hostname', { hostname: 'a'.repeat(300) }, 'input.hostname'],
    ['sshUser', { sshUser: 'root;touch /tmp/pwned' }, 'input.sshUser'],
    ['sshUser', { sshUser: '-oProxyCommand=touch /tmp/pwned' }, 'input.sshUser'],
    ['sshUser', { sshUser: '`touch /tmp/pwned`' }, 'input.sshUser'],
    ['label', { labels: [{ key: 'zone', value: '$(touch /tmp/pwned)' }] }, 'input.labels'],
    ['label', { labels: [{ key: 'a\nb', value: 'x' }] }, 'input.labels'],
    ['label', { labels: [{ key: 'kubernetes.io/role', value: 'master' }] }, 'input.labels'],
    ['taint', { taints: [{ key: 'x', value: 'y', effect: 'NoSchedule;reboot' }] }, 'input.taints'],
    ['ip', { ip: '198.18.0.16; touch /tmp/pwned' }, 'input.ip'],
    ['port', { sshPort: 70000 }, 'input.sshPort'],
  ])('refuses a hostile %s, stores nothing and runs nothing', async (_what, overrides, field) => {
    const host = world.lab.hosts[5];
    const before = await world.gql<{ nodes: unknown[] }>('query($c: ID!) { nodes(clusterId: $c) { id } }', { c: world.clusterId });
    const result = await world.gql(ADD, {
      input: { clusterId: world.clusterId, hostname: host.hostname, ip: host.ip, sshPort: 22, sshUser: 'root', password: host.password, ...overrides },
    });
    expect(result.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message.startsWith(field)).toBe(true);
    const after = await world.gql<{ nodes: unknown[] }>('query($c: ID!) { nodes(clusterId: $c) { id } }', { c: world.clusterId });
    expect(after.data?.nodes).toHaveLength(before.data?.nodes.length ?? -1);
    for (const hostId of ['h6', 'h7']) {
      expect((await world.lab.exec(hostId, ['test', '-e', '/tmp/pwned'], { allowFailure: true })).code).not.toBe(0);
    }
    expect(existsSync('/tmp/pwned')).toBe(false);
  });

  it('refuses a second node with the same hostname or IP in the cluster', async () => {
    const host = world.lab.hosts[0];
    const sameName = await world.gql(ADD, { input: { clusterId: world.clusterId, hostname: 'h1', ip: world.lab.unassignedIps[0], sshUser: 'root', password: 'x' } });
    expect(sameName.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT', field: 'input.hostname' } });
    const sameIp = await world.gql(ADD, { input: { clusterId: world.clusterId, hostname: 'other', ip: host.ip, sshUser: 'root', password: 'x' } });
    expect(sameIp.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT', field: 'input.ip' } });
  });

  it('refuses a host below the cluster\'s host minimums when it is added, naming each failed check', async () => {
    const setMinimums = (minimums: Record<string, number | string[]> | null) =>
      world.gql<{ setClusterHostMinimums: { hostMinimums: Record<string, number> | null } }>(
        'mutation($c: ID!, $m: HostMinimumsInput) { setClusterHostMinimums(clusterId: $c, minimums: $m) { hostMinimums { cpus memoryBytes diskBytes labelKeys } } }',
        { c: world.clusterId, m: minimums },
      );
    expect((await setMinimums({ cpus: 0, memoryBytes: 2 ** 50, diskBytes: 0, labelKeys: ['topology.kubernetes.io/zone', 'rack'] })).data?.setClusterHostMinimums.hostMinimums).toEqual({
      cpus: 0, memoryBytes: 2 ** 50, diskBytes: 0, labelKeys: ['topology.kubernetes.io/zone', 'rack'],
    });
    try {
      const id = await world.addHost(9, { labels: [{ key: 'rack', value: 'r7' }] });
      const settled = await world.waitForStatus(id, ['READY_TO_INSTALL', 'AUTH_FAILED', 'UNREACHABLE', 'PRECHECK_FAILED'], 60_000);
      expect(settled).toMatchObject({ status: 'PRECHECK_FAILED', statusReasonCode: 'node.belowClusterMinimums' });
      expect(settled.statusReason).toMatch(/^the host is below what this cluster asks of every host: has-min-memory: [\d.]+ GiB < 1048576 GiB; has-labels: missing topology\.kubernetes\.io\/zone; /);
      // The record goes, so the host is added again below once nothing is asked.
      expect((await world.gql('mutation($n: ID!) { deleteNodeRecord(nodeId: $n) { id } }', { n: id })).errors).toBeUndefined();
    } finally {
      expect((await setMinimums(null)).data?.setClusterHostMinimums.hostMinimums).toBeNull();
    }
  });

  it('adds the remaining hosts concurrently, all reaching READY_TO_INSTALL', async () => {
    const ids = await Promise.all([5, 6, 7, 8, 9].map((index) => world.addHost(index)));
    const statuses = await Promise.all(ids.map((id) => world.waitForStatus(id, ['READY_TO_INSTALL', 'AUTH_FAILED', 'UNREACHABLE', 'PRECHECK_FAILED'], 180_000)));
    expect(statuses.map((status) => status.status)).toEqual(Array(5).fill('READY_TO_INSTALL'));
  });

  it('never shows a password or private key in a response, a log line or the audit log', async () => {
    const privateKey = await readFile(world.lab.privateKeyPath, 'utf8');
    const secrets = [...new Set(world.lab.hosts.map((host) => host.password)), 'not-the-password', privateKey.split('\n')[1]];
    const everything = await world.gql(`query($c: ID!) { nodes(clusterId: $c) { id hostname sshUser sshAuthMethod status statusReason hostKeyFingerprint labels { key value } } }`, { c: world.clusterId });
    const db = new pg.Client({ connectionString: world.api.database?.url });
    await db.connect();
    const audit = JSON.stringify((await db.query('SELECT * FROM audit_log')).rows);
    const stored = JSON.stringify((await db.query('SELECT * FROM nodes')).rows);
    await db.end();
    expect(audit).toContain('addNode');
    expect(audit).toContain('[redacted]');
    expect(stored).toContain('v1.');
    const haystacks = [JSON.stringify(everything), world.api.output(), audit, stored];
    for (const secret of secrets) {
      for (const haystack of haystacks) {
        expect(haystack.includes(secret)).toBe(false);
      }
    }
  });
});
