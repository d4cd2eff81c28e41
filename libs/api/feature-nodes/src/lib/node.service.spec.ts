import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterEntity, ClusterStore, type Database, NodeStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { type AgentBinary, sshTargetOf } from '@ccos/api/data-access-hosts';
import { refusalOf } from '@ccos/api/util-graphql/testing';
import { SecretBox } from '@ccos/api/util-secrets';
import { AddNodeInput } from './add-node.input';
import { MAX_NODES_PAGE, NodeService } from './node.service';

describe('NodeService: entering hosts, on a real database', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let nodes: NodeStore;
  let clusterId: string;
  const secrets = new SecretBox('a-test-secret-key-of-at-least-32-characters');
  const scheduled: string[] = [];
  let agent: AgentBinary | null = { path: '/opt/agent', size: 1, sha256: 'a'.repeat(64) } as unknown as AgentBinary;
  let service: NodeService;

  const input = (fields: Partial<AddNodeInput> = {}): AddNodeInput =>
    Object.assign(new AddNodeInput(), { clusterId, hostname: 'w1', ip: '198.18.0.10', sshPort: 22, sshUser: 'root', password: 'the-root-password', labels: [], taints: [], acknowledgeOldCertificates: false, ...fields });

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    nodes = new NodeStore(dataSource, () => undefined);
    clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: 'lab', apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    service = new NodeService(new ClusterStore(dataSource), nodes, secrets, { schedule: async (id) => void scheduled.push(id) }, () => agent);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('stores a host ADDING with its credentials sealed, and queues its checks', async () => {
    const node = await service.add(input({ labels: [{ key: 'zone', value: 'a' }] }), { role: 'OPERATOR' });
    expect(node).toMatchObject({ hostname: 'w1', ip: '198.18.0.10', status: 'ADDING', origin: 'ADDED', sshAuthMethod: 'PASSWORD', labels: [{ key: 'zone', value: 'a' }] });
    expect(scheduled).toEqual([node.id]);
    const stored = await nodes.get(node.id);
    expect(JSON.stringify(stored)).not.toContain('the-root-password');
    expect(sshTargetOf(stored, secrets).auth).toEqual({ kind: 'password', password: 'the-root-password' });
  });

  it.each([
    ['a name the cluster already has', { ip: '198.18.0.11' }, { code: 'CONFLICT', field: 'input.hostname', problemCode: 'node.hostnameTaken' }],
    ['an address the cluster already has', { hostname: 'w2' }, { code: 'CONFLICT', field: 'input.ip', problemCode: 'node.ipTaken' }],
    ['a loopback address, where no credentials may go', { hostname: 'w3', ip: '127.0.0.1' }, { code: 'BAD_USER_INPUT', field: 'input.ip' }],
    ['a password and a key at once', { hostname: 'w4', ip: '198.18.0.14', privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----' }, { code: 'BAD_USER_INPUT', field: 'input.privateKey', problemCode: 'node.credentialsBoth' }],
    ['a label Kubernetes refuses', { hostname: 'w5', ip: '198.18.0.15', labels: [{ key: 'bad key', value: 'x' }] }, { code: 'BAD_USER_INPUT', field: 'input.labels' }],
    ['a control-plane role from an OPERATOR', { hostname: 'w6', ip: '198.18.0.16', labels: [{ key: 'node-role.kubernetes.io/master', value: '' }] }, { code: 'FORBIDDEN' }],
  ] as const)('refuses %s, storing and queuing nothing', async (_case, fields, refusal) => {
    const before = (await service.list(clusterId)).length;
    expect(await refusalOf(service.add(input(fields as Partial<AddNodeInput>), { role: 'OPERATOR' }))).toMatchObject(refusal);
    expect((await service.list(clusterId)).length).toBe(before);
    expect(scheduled).toHaveLength(1);
  });

  it('refuses every add while the service has no agent to copy, and says so', async () => {
    agent = null;
    try {
      expect(await refusalOf(service.add(input({ hostname: 'w7', ip: '198.18.0.17' }), { role: 'ADMIN' }))).toMatchObject({ code: 'FAILED_PRECONDITION', problemCode: 'node.noAgentBinary' });
    } finally {
      agent = { path: '/opt/agent', size: 1, sha256: 'a'.repeat(64) } as unknown as AgentBinary;
    }
  });

  it('takes the place of a Node found in the cluster under the same name, which becomes REMOVED', async () => {
    const found = await nodes.create({ clusterId, hostname: 'w8', ip: '198.18.0.18', status: 'JOINED', origin: 'DISCOVERED' });
    const added = await service.add(input({ hostname: 'w8', ip: '198.18.0.18' }), { role: 'OPERATOR' });
    expect(added.status).toBe('ADDING');
    expect((await nodes.get(found.id)).status).toBe('REMOVED');
  });

  it('re-adds a name removed after it joined only with an ADMIN\'s acknowledgement that its old certificates may still be valid', async () => {
    const removed = await nodes.create({ clusterId, hostname: 'w9', ip: '198.18.0.19', status: 'REMOVED', everJoined: true });
    expect(await refusalOf(service.add(input({ hostname: 'w9', ip: '198.18.0.29' }), { role: 'ADMIN' }))).toMatchObject({ code: 'FAILED_PRECONDITION', field: 'input.acknowledgeOldCertificates', problemCode: 'node.oldCertificatesMayBeValid' });
    expect(await refusalOf(service.add(input({ hostname: 'w9', ip: '198.18.0.29', acknowledgeOldCertificates: true }), { role: 'OPERATOR' }))).toMatchObject({ code: 'FORBIDDEN', problemCode: 'node.oldCertificatesNeedAdmin' });
    const again = await service.add(input({ hostname: 'w9', ip: '198.18.0.29', acknowledgeOldCertificates: true }), { role: 'ADMIN' });
    expect(again.id).not.toBe(removed.id);
  });

  it('forgets a record that never joined, but not one that did', async () => {
    const never = await nodes.create({ clusterId, hostname: 'w10', ip: '198.18.0.20', status: 'UNREACHABLE' });
    await service.deleteRecord(never.id);
    expect(await service.find(never.id)).toBeNull();
    const joined = await nodes.create({ clusterId, hostname: 'w11', ip: '198.18.0.21', status: 'JOINED', everJoined: true });
    expect(await refusalOf(service.deleteRecord(joined.id))).toMatchObject({ code: 'FAILED_PRECONDITION', problemCode: 'node.joinedRemoveInstead' });
    expect(await service.find(joined.id)).not.toBeNull();
  });

  it('lists a first page in hostname order, and refuses a page size out of range', async () => {
    const all = (await service.list(clusterId)).map((node) => node.hostname);
    expect(all.length).toBeGreaterThan(2);
    expect(all).toEqual([...all].sort());
    expect((await service.list(clusterId, 2)).map((node) => node.hostname)).toEqual(all.slice(0, 2));
    for (const first of [0, -1, 1.5, MAX_NODES_PAGE + 1]) {
      expect(await refusalOf(service.list(clusterId, first))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'first', problemCode: 'validation.between' });
    }
  });
});
