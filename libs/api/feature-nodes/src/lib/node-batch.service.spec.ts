import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ClusterEntity, ClusterStore, type Database, InstallRunStore, NodeBatchStore, NodeStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { type AgentBinary, sshTargetOf } from '@ccos/api/data-access-hosts';
import { PreconditionError } from '@ccos/api/util-graphql';
import { appErrorOf, refusalOf } from '@ccos/api/util-graphql/testing';
import { SecretBox } from '@ccos/api/util-secrets';
import { message } from '@ccos/shared/messages';
import { AddNodesInput } from './add-nodes.input';
import { NodeBatchService } from './node-batch.service';

const OPERATOR = { role: 'OPERATOR' } as const;

/** Bulk add and batch installs on a real database; the provisioning queue, the installer and the readiness check are recorded. */
describe('NodeBatchService: many hosts in one request, and the batch they form', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let nodes: NodeStore;
  let service: NodeBatchService;
  let clusterId: string;
  const secrets = new SecretBox('a-test-secret-key-of-at-least-32-characters');
  const scheduled: string[] = [];
  const kicked: string[] = [];
  let clusterReady = true;

  const input = (fields: Partial<AddNodesInput>): AddNodesInput =>
    Object.assign(new AddNodesInput(), { clusterId, sshPort: 22, sshUser: 'root', password: 'the-shared-password', labels: [], taints: [], addValidRows: false, dryRun: false, ...fields });
  const storedCount = async () => (await nodes.listingOf(clusterId)).length;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 3 });
    nodes = new NodeStore(dataSource, () => undefined);
    service = new NodeBatchService(
      new ClusterStore(dataSource),
      nodes,
      new NodeBatchStore(dataSource),
      new InstallRunStore(dataSource),
      secrets,
      { schedule: async (id) => void scheduled.push(id) },
      () => ({ path: '/opt/agent', size: 1, sha256: 'a'.repeat(64) }) as unknown as AgentBinary,
      { kick: async (batchId) => void kicked.push(batchId) },
      4,
      async () => {
        if (!clusterReady) {
          throw new PreconditionError(message('install.clusterNotReady', { cluster: 'lab', checks: 'BOOTSTRAP_NAMESPACE', count: 1 }));
        }
      },
    );
  });
  beforeEach(async () => {
    clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: `lab-${clusterId.slice(0, 8)}`, apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    scheduled.length = 0;
    kicked.length = 0;
    clusterReady = true;
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('checks every row before storing anything: one bad row refuses the request, and a dry run stores nothing', async () => {
    const list = ['w1 198.18.0.31', 'w2 198.18.0.32', 'w1 198.18.0.33', 'w4 127.0.0.1', 'w5 not-an-address'].join('\n');
    const result = await service.addNodes(input({ list }), 'olga', OPERATOR);
    // A name given twice is refused on both rows: which host was meant is the operator's to say.
    expect(result).toMatchObject({ batch: null, added: 0, refused: 4 });
    expect(result.rows.map((row) => [row.hostname, row.problems.map((problem) => problem.field)])).toEqual([
      ['w1', ['hostname']],
      ['w2', []],
      ['w1', ['hostname']],
      ['w4', ['ip']],
      ['w5', ['ip']],
    ]);
    expect((await service.addNodes(input({ list: 'w1 198.18.0.31\nw2 198.18.0.32', dryRun: true }), 'olga', OPERATOR)).added).toBe(0);
    expect(await storedCount()).toBe(0);
    expect(scheduled).toEqual([]);
  });

  it('adds the valid rows when asked, as one batch of ADDING hosts with the shared credential sealed, each queued for its checks', async () => {
    const list = ['w1 198.18.0.41', 'w2 198.18.0.42', 'w3 198.18.0.999'].join('\n');
    const result = await service.addNodes(input({ list, addValidRows: true }), 'olga', OPERATOR);
    expect(result).toMatchObject({ added: 2, refused: 1, batch: { createdBy: 'olga', state: expect.any(String), progress: { total: 2, added: 2 } } });
    expect(result.batch?.hosts.map((host) => [host.hostname, host.status, host.position, host.phase])).toEqual([
      ['w1', 'ADDING', 1, 'ADDED'],
      ['w2', 'ADDING', 2, 'ADDED'],
    ]);
    const added = await nodes.listingOf(clusterId);
    expect(scheduled.sort()).toEqual(added.map((node) => node.id).sort());
    for (const node of added) {
      const stored = await nodes.get(node.id);
      expect(JSON.stringify(stored)).not.toContain('the-shared-password');
      expect(sshTargetOf(stored, secrets).auth).toEqual({ kind: 'password', password: 'the-shared-password' });
    }
  });

  it('refuses rows without any credential, and a control-plane role from an OPERATOR for the whole request', async () => {
    const withoutCredentials = await service.addNodes(input({ list: 'w1 198.18.0.51', password: null }), 'olga', OPERATOR);
    expect(withoutCredentials.rows[0]?.problems).toEqual([expect.objectContaining({ field: 'credentials', messageCode: 'batch.noCredentials' })]);
    const masters = input({ rows: [{ hostname: 'm1', ip: '198.18.0.52', labels: [{ key: 'node-role.kubernetes.io/master', value: '' }], taints: [] }] as never });
    expect(await refusalOf(service.addNodes(masters, 'olga', OPERATOR))).toMatchObject({ code: 'FORBIDDEN' });
    expect(await storedCount()).toBe(0);
  });

  it('queues a batch only once the cluster is ready, kicks the installer, and refuses a concurrency out of range and a batch with nothing left to ask', async () => {
    const { batch } = await service.addNodes(input({ list: 'w1 198.18.0.61\nw2 198.18.0.62' }), 'olga', OPERATOR);
    const batchId = batch?.id ?? '';
    clusterReady = false;
    expect(await refusalOf(service.installBatch(batchId, null, 'olga'))).toMatchObject({ code: 'FAILED_PRECONDITION', problemCode: 'install.clusterNotReady' });
    expect((await service.batch(batchId)).progress).toMatchObject({ added: 2, queued: 0 });
    expect(kicked).toEqual([]);
    clusterReady = true;
    expect(await refusalOf(service.installBatch(batchId, 0, 'olga'))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'concurrency' });
    const queued = await service.installBatch(batchId, 2, 'olga');
    expect(queued).toMatchObject({ concurrency: 2, progress: { queued: 2 } });
    expect(kicked).toEqual([batchId]);
    // Cancelling takes the waiting hosts out; then nothing is left to cancel, or to install.
    expect((await service.cancelRemaining(batchId)).progress).toMatchObject({ queued: 0, cancelled: 2 });
    expect(await refusalOf(service.cancelRemaining(batchId))).toMatchObject({ problemCode: 'batch.noneWaiting' });
    expect(await refusalOf(service.installBatch(batchId, null, 'olga'))).toMatchObject({ problemCode: 'batch.allAsked' });
  });

  it('retries the failed hosts: those whose checks failed connect again first, and nothing happens while none failed', async () => {
    const { batch } = await service.addNodes(input({ list: 'w1 198.18.0.71\nw2 198.18.0.72' }), 'olga', OPERATOR);
    const batchId = batch?.id ?? '';
    expect(await refusalOf(service.retryFailed(batchId, 'olga'))).toMatchObject({ problemCode: 'batch.noneFailed' });
    const [first] = await nodes.listingOf(clusterId);
    // Its checks failed: the wrong password.
    await nodes.transition(first?.id ?? '', 'SSH_AUTH_FAILED', message('node.connecting'), { batchPhase: 'FAILED' });
    scheduled.length = 0;
    const retried = await service.retryFailed(batchId, 'olga');
    expect(retried.hosts.find((host) => host.nodeId === first?.id)).toMatchObject({ phase: 'QUEUED', statusReasonCode: 'node.connectingAgain' });
    expect(scheduled).toEqual([first?.id]);
    expect(kicked).toEqual([batchId]);
    expect((await appErrorOf(service.batch(randomUUID()))).code).toBe('NOT_FOUND');
  });
});
