import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterEntity, type Database, NodeEntity, NodeStore, openDatabase } from '@ccos/api/data-access-db';
import { RecordingJobs, createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { sealCredentials } from '@ccos/api/data-access-hosts';
import { SshPool } from '@ccos/api/data-access-ssh';
import { type PlayedSshHost, startPlayedSshHost } from '@ccos/api/data-access-ssh/testing';
import { appErrorOf } from '@ccos/api/util-graphql/testing';
import { SecretBox } from '@ccos/api/util-secrets';
import { type HostVerdict, type Leftover, decideHostVerdict } from '@ccos/shared/domain';
import { CLEAN_HOST_TASK, type ClusterLeftoverCleaner, HostCleanupService } from './host-cleanup.service';

/** What the played host holds: files under the kubelet's and Kubernetes' folders, and the kubelet unit's state. */
interface HostModel {
  files: Set<string>;
  kubeletActive: boolean;
  kubeletEnabled: boolean;
  /** Re-enabled by something on the host (a preset, a config manager) whenever it is disabled. */
  kubeletComesBack: boolean;
  cleanups: number;
}

function scanOutput(host: HostModel): string {
  const under = (prefix: string) => [...host.files].filter((file) => file.startsWith(prefix));
  return [
    '@@machine-id',
    '0123456789abcdef0123456789abcdef',
    '@@kubelet-pki',
    ...under('/var/lib/kubelet/pki/'),
    '@@kubeconfig',
    ...[...host.files].filter((file) => file === '/var/lib/kubelet/kubeconfig' || file === '/etc/kubernetes/kubeconfig'),
    '@@kubernetes-files',
    ...under('/etc/kubernetes/'),
    '@@kubelet-active',
    host.kubeletActive ? 'active' : 'inactive',
    '@@kubelet-enabled',
    host.kubeletEnabled ? 'enabled' : 'disabled',
    '@@end',
    '',
  ].join('\n');
}

/**
 * Host cleanup on the real database, over real SSH to an in-process server that plays the scan
 * and the cleanup against a model of the host (the real scripts would touch this machine's /etc).
 */
describe('host cleanup', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let nodes: NodeStore;
  let sshHost: PlayedSshHost;
  let model: HostModel;
  const secrets = new SecretBox('host-cleanup-spec-secret-key-0123456789');
  const pool = new SshPool({ maxSessions: 2 });
  const cluster = { deleted: [] as string[], denied: [] as Array<{ name: string; actor: string }> };
  const cleaner: ClusterLeftoverCleaner = {
    deleteNode: async (_clusterId, name) => void cluster.deleted.push(name),
    denyCsr: async (_clusterId, name, actor) => void cluster.denied.push({ name, actor }),
  };
  /** The service with its jobs run at once in the background, as by a free worker. */
  const service = (withCluster: ClusterLeftoverCleaner | null = cleaner, jobs = new RecordingJobs({ runWhenQueued: true })) => new HostCleanupService(nodes, secrets, pool, withCluster, jobs, pino({ level: 'silent' }), { pollMs: 20 });

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 3 });
    nodes = new NodeStore(dataSource, () => undefined);
    sshHost = await startPlayedSshHost((command, channel) => {
      if (command.includes('ccos-leftover-scan')) {
        channel.write(scanOutput(model));
      } else if (command.includes('ccos-leftover-cleanup')) {
        model.cleanups += 1;
        model.kubeletActive = false;
        model.kubeletEnabled = model.kubeletComesBack;
        for (const [, path] of command.matchAll(/'(\/(?:etc\/kubernetes|var\/lib\/kubelet)\/[^']*)'/g)) {
          model.files.delete(path ?? '');
        }
        channel.write('cleaned\n');
      } else {
        channel.stderr.write(`unexpected command: ${command}\n`);
        channel.exit(127);
        channel.end();
        return;
      }
      channel.exit(0);
      channel.end();
    }, 'pw');
  });
  afterAll(async () => {
    await pool.close();
    await sshHost?.stop();
    await dataSource?.destroy();
    await database?.drop();
  });

  const newModel = (files: string[], extra: Partial<HostModel> = {}): HostModel => ({ files: new Set(files), kubeletActive: true, kubeletEnabled: true, kubeletComesBack: false, cleanups: 0, ...extra });

  /** A node READY_TO_INSTALL on a cluster of its own, whose stored verdict lists `leftovers`. */
  async function nodeWith(leftovers: readonly Leftover[], status: NodeEntity['status'] = 'READY_TO_INSTALL', verdict: HostVerdict = decideHostVerdict(leftovers)): Promise<NodeEntity> {
    const clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: `c-${clusterId.slice(0, 8)}`, apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    const node = await nodes.create({ clusterId, hostname: 'w1', ip: '127.0.0.1', sshPort: sshHost.port, sshUser: 'root', ...sealCredentials(secrets, { kind: 'PASSWORD', password: 'pw' }), status });
    return nodes.update(node.id, { hostVerdict: verdict });
  }

  const CERT = '/var/lib/kubelet/pki/kubelet-client-current.pem';
  const KUBECONFIG = '/var/lib/kubelet/kubeconfig';
  const MANIFEST = '/etc/kubernetes/manifests/static.yaml';
  const hostLeftovers: Leftover[] = [
    { kind: 'KUBELET_CERTIFICATES', item: CERT },
    { kind: 'KUBECONFIG', item: KUBECONFIG },
    { kind: 'KUBERNETES_FILES', item: MANIFEST },
    { kind: 'KUBELET_SERVICE', item: 'kubelet.service (running)' },
    { kind: 'KUBELET_SERVICE', item: 'kubelet.service (enabled)' },
  ];
  const clusterLeftovers: Leftover[] = [
    { kind: 'CLUSTER_NODE', item: 'Node/w1 (NotReady)', name: 'w1' },
    { kind: 'CLUSTER_CSRS', item: 'CertificateSigningRequest/csr-old', name: 'csr-old' },
  ];

  it('removes exactly what the verdict listed, on the host and in the cluster, records who cleaned, and refuses a second time', async () => {
    // A file that appeared after the verdict was not shown to the operator: it stays.
    const LATER = '/etc/kubernetes/manifests/later.yaml';
    model = newModel([CERT, KUBECONFIG, MANIFEST, LATER]);
    const node = await nodeWith([...hostLeftovers, ...clusterLeftovers]);
    const jobs = new RecordingJobs({ runWhenQueued: true });
    const cleaned = await service(cleaner, jobs).clean(node.id, 'alice');
    // Cleaned by a worker, on the host's queue: the request only checks, queues and waits.
    expect(jobs.queued).toEqual([{ task: CLEAN_HOST_TASK, payload: { nodeId: node.id, actor: 'alice', requestId: expect.any(String) }, options: expect.objectContaining({ key: `${CLEAN_HOST_TASK}:${node.id}`, queue: 'host:127.0.0.1' }) }]);
    expect([...model.files]).toEqual([LATER]);
    expect(model).toMatchObject({ kubeletActive: false, kubeletEnabled: false, cleanups: 1 });
    expect(cluster.deleted).toEqual(['w1']);
    expect(cluster.denied).toEqual([{ name: 'csr-old', actor: 'alice' }]);
    expect(cleaned.hostVerdict?.cleanedAt).toEqual(expect.any(String));
    expect(cleaned.statusReasonCoded).toMatchObject({ code: 'node.leftoversCleaned', params: { actor: 'alice' } });
    expect((await appErrorOf(service().clean(node.id, 'alice'))).extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'cleanup.nothingToClean', messageParams: { state: 'cleaned' } });
    expect(model.cleanups).toBe(1);
  });

  it('says what came back after cleaning, stores the new scan as the verdict, and does not call the host clean', async () => {
    model = newModel([CERT], { kubeletComesBack: true });
    const node = await nodeWith(hostLeftovers.filter((leftover) => leftover.item !== KUBECONFIG && leftover.item !== MANIFEST));
    const refused = await appErrorOf(service().clean(node.id, 'alice'));
    expect(refused.extensions).toMatchObject({ messageCode: 'cleanup.leftBehind', messageParams: { items: 'kubelet.service (enabled)' } });
    const stored = await nodes.get(node.id);
    expect(stored.hostVerdict).toMatchObject({ verdict: 'CLEANABLE', leftovers: [{ kind: 'KUBELET_SERVICE', item: 'kubelet.service (enabled)' }] });
    expect(stored.hostVerdict?.cleanedAt ?? null).toBeNull();
  });

  it('says why when the host does not answer, and cleans nothing of a node that changed while its job waited', async () => {
    model = newModel([CERT]);
    const node = await nodeWith(hostLeftovers.filter((leftover) => leftover.kind !== 'KUBELET_SERVICE'));
    await nodes.update(node.id, { sshPort: 1 });
    const unreachable = await appErrorOf(service().clean(node.id, 'alice'));
    expect(unreachable.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'cleanup.failed', messageParams: { hostname: 'w1' } });
    expect((await nodes.get(node.id)).hostVerdict).toMatchObject({ verdict: 'CLEANABLE', lastCleanup: { problem: { code: 'cleanup.failed' } } });
    await nodes.update(node.id, { sshPort: sshHost.port });

    // Queued, then the node starts installing before a worker takes the job: the job touches nothing and says why.
    const held = new RecordingJobs();
    const asked = service(cleaner, held).clean(node.id, 'alice');
    await expect.poll(() => held.queued.length).toBe(1);
    await dataSource.getRepository(NodeEntity).update(node.id, { status: 'INSTALLING' });
    await held.run(CLEAN_HOST_TASK, () => true);
    expect((await appErrorOf(asked)).extensions).toMatchObject({ messageCode: 'cleanup.needsReady', messageParams: { status: { params: { status: 'INSTALLING' } } } });
    expect(model).toMatchObject({ files: new Set([CERT]), cleanups: 0 });
  });

  it('refuses, touching nothing, a host that needs a reinstall, a node not READY_TO_INSTALL, and cluster leftovers it cannot reach', async () => {
    model = newModel([CERT]);
    const removedMachine = await nodeWith([{ kind: 'REMOVED_MACHINE', item: 'machine-id of a removed node' }]);
    expect((await appErrorOf(service().clean(removedMachine.id, 'alice'))).extensions).toMatchObject({ messageCode: 'cleanup.reinstallRequired' });
    const installing = await nodeWith(hostLeftovers, 'INSTALLING');
    expect((await appErrorOf(service().clean(installing.id, 'alice'))).extensions).toMatchObject({ messageCode: 'cleanup.needsReady', status: 'INSTALLING' });
    const withClusterItems = await nodeWith([...hostLeftovers, ...clusterLeftovers]);
    expect((await appErrorOf(service(null).clean(withClusterItems.id, 'alice'))).extensions).toMatchObject({ messageCode: 'cleanup.clusterUnreachable' });
    expect(model).toMatchObject({ files: new Set([CERT]), kubeletActive: true, cleanups: 0 });
  });
});
