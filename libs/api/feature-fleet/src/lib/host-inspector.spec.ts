import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClusterEntity, type Database, HostManifestStore, InstallRunEntity, type NodeEntity, NodeStore, StepEventEntity, hostQueue, openDatabase,
} from '@ccos/api/data-access-db';
import { RecordingJobs, createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { sealCredentials } from '@ccos/api/data-access-hosts';
import { SshPool } from '@ccos/api/data-access-ssh';
import { type PlayedSshHost, startLocalShellHost } from '@ccos/api/data-access-ssh/testing';
import { SecretBox } from '@ccos/api/util-secrets';
import type { InstallStep } from '@ccos/shared/domain';
import { FakeClock } from '@ccos/shared/util-timing/testing';
import { HostInspector, INSPECT_TASK } from './host-inspector';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Drift on a real database, over real SSH to an in-process server whose commands this machine's
 * sh runs, against real files in a temporary folder that stand for what an install wrote.
 */
describe('host inspector: what a host runs, hashed again over SSH and compared with its install\'s record', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let nodes: NodeStore;
  let manifests: HostManifestStore;
  let host: PlayedSshHost;
  let dir: string;
  let clusterSet: string | null = 'c'.repeat(64);
  const clock = new FakeClock('2026-12-06T10:00:00.000Z', false);
  const secrets = new SecretBox('a-test-secret-key-of-at-least-32-characters');
  const jobs = new RecordingJobs();
  let inspector: HostInspector;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    nodes = new NodeStore(dataSource, () => undefined);
    manifests = new HostManifestStore(dataSource);
    host = await startLocalShellHost('pw');
    dir = await mkdtemp(join(tmpdir(), 'ccos-host-'));
    inspector = new HostInspector({
      nodes,
      manifests,
      ssh: new SshPool({ maxSessions: 2 }),
      secrets,
      jobs,
      clusterSetSha256: async () => clusterSet,
      intervalMs: 0,
      clock,
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await host.stop();
    await dataSource.destroy();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A joined node on a cluster of its own (a cluster takes each address once); only 127.0.0.1 has a host that answers. */
  async function joined(hostname: string, ip = '127.0.0.1', status: NodeEntity['status'] = 'JOINED'): Promise<NodeEntity> {
    const clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: `c-${hostname}`, apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    return nodes.create({ clusterId, hostname, ip, sshPort: host.port, sshUser: 'root', ...sealCredentials(secrets, { kind: 'PASSWORD', password: 'pw' }), status });
  }

  /** A succeeded install run of the node whose steps wrote `files` (step → path → contents), as its agent reported them. */
  async function installed(node: NodeEntity, files: Partial<Record<InstallStep, Record<string, string>>>, manifestSha256 = 'c'.repeat(64)): Promise<string> {
    const runId = randomUUID();
    await dataSource.getRepository(InstallRunEntity).insert({ id: runId, nodeId: node.id, status: 'SUCCEEDED', requestedBy: 'alice' });
    let seq = 0;
    const binaries = { manifestVersion: '4.14.3', manifestSha256 };
    for (const [step, written] of Object.entries({ DOWNLOAD_BINARIES: {}, ...files })) {
      for (const [path, contents] of Object.entries(written)) {
        await writeFile(path, contents);
      }
      const detail = { ...(step === 'DOWNLOAD_BINARIES' ? binaries : {}), written: Object.fromEntries(Object.entries(written).map(([path, contents]) => [path, sha256(contents)])) };
      await dataSource.getRepository(StepEventEntity).insert({ runId, seq: ++seq, step: step as InstallStep, status: 'SUCCEEDED', message: 'done', detail, occurredAt: new Date() });
    }
    await manifests.recordRun({ id: runId, nodeId: node.id }, new Date(clock.now()));
    return runId;
  }

  it('records a run\'s files from its steps\' events and finds them as written: CURRENT', async () => {
    const node = await joined('w-current');
    const unit = join(dir, 'current-kubelet.service');
    const runId = await installed(node, { INSTALL_SERVICES: { [unit]: '[Unit]\n' }, APPLY_IGNITION: { [unit]: '[Unit]\nDescription=kubelet\n', [join(dir, 'current-sysconfig')]: 'ARGS=\n' } });

    expect(await inspector.view(node.id)).toMatchObject({
      runId,
      artifactSetVersion: '4.14.3',
      state: 'UNINSPECTED',
      files: [
        { path: unit, sha256: sha256('[Unit]\nDescription=kubelet\n'), step: 'APPLY_IGNITION' },
        { path: join(dir, 'current-sysconfig'), sha256: sha256('ARGS=\n'), step: 'APPLY_IGNITION' },
      ],
    });
    const inspected = await inspector.inspect(node.id);
    expect(inspected).toMatchObject({ state: 'CURRENT', drift: [], inspectionProblem: null, inspectedAt: new Date(clock.now()) });
  });

  it('records the kernel and the running kubelet START_KUBELET found, and an inspection reads them again and names what changed; an older agent\'s run records none', async () => {
    const node = await joined('w-running');
    const runId = await installed(node, { INSTALL_SERVICES: { [join(dir, 'running-unit')]: 'u' } });
    const running = { kernelRelease: '5.14.0-427.el9.x86_64', kubeletVersion: 'v1.31.4', kubeletFlags: ['--node-ip=198.18.0.5', '--bootstrap-token=<redacted>'] };
    await dataSource.getRepository(StepEventEntity).insert({ runId, seq: 99, step: 'START_KUBELET', status: 'SUCCEEDED', message: 'Ready', detail: { written: {}, running }, occurredAt: new Date() });
    await manifests.recordRun({ id: runId, nodeId: node.id }, new Date(clock.now()));
    expect(await inspector.view(node.id)).toMatchObject({ runningAtInstall: running, runningNow: null, runningChanges: [] });

    // This machine's kernel is not the one recorded, and no kubelet runs here: only the kernel is compared.
    const inspected = await inspector.inspect(node.id);
    const kernel = (await promisify(execFile)('uname', ['-r'])).stdout.trim();
    expect(inspected).toMatchObject({ state: 'CURRENT', runningNow: { kernelRelease: kernel, kubeletVersion: null, kubeletFlags: [] }, runningChanges: ['KERNEL'] });

    const older = await joined('w-older-agent');
    await installed(older, { INSTALL_SERVICES: { [join(dir, 'older-unit')]: 'u' } });
    expect(await inspector.view(older.id)).toMatchObject({ runningAtInstall: null, runningNow: null, runningChanges: [] });
    expect(await inspector.inspect(older.id)).toMatchObject({ runningNow: { kernelRelease: kernel }, runningChanges: [] });
  });

  it('records a retried install whole: the earlier run\'s steps up to its failure, then the retry\'s, but nothing from an install before them', async () => {
    const node = await joined('w-retried');
    const [old, unit, config] = ['retried-old', 'retried-unit', 'retried-config'].map((name) => join(dir, name));
    const runs = dataSource.getRepository(InstallRunEntity);
    const events = dataSource.getRepository(StepEventEntity);
    const at = (minute: number) => new Date(Date.UTC(2026, 11, 6, 9, minute));
    const written = (files: Record<string, string>) => ({ written: Object.fromEntries(Object.entries(files).map(([path, contents]) => [path, sha256(contents)])) });
    const [before, first, retry] = [randomUUID(), randomUUID(), randomUUID()];
    await runs.insert({ id: before, nodeId: node.id, status: 'SUCCEEDED', requestedBy: 'alice', startedAt: at(0) });
    await runs.insert({ id: first, nodeId: node.id, status: 'FAILED', requestedBy: 'alice', startedAt: at(10) });
    await runs.insert({ id: retry, nodeId: node.id, status: 'SUCCEEDED', requestedBy: 'alice', startStep: 'APPLY_IGNITION', startedAt: at(20) });
    await events.insert([
      { runId: before, seq: 1, step: 'INSTALL_SERVICES', status: 'SUCCEEDED', message: 'done', detail: written({ [old]: 'old' }), occurredAt: at(1) },
      { runId: first, seq: 1, step: 'INSTALL_SERVICES', status: 'SUCCEEDED', message: 'done', detail: written({ [unit]: 'u' }), occurredAt: at(11) },
      { runId: first, seq: 2, step: 'APPLY_IGNITION', status: 'FAILED', message: 'failed', detail: written({ [config]: 'half' }), occurredAt: at(12) },
      { runId: retry, seq: 1, step: 'APPLY_IGNITION', status: 'SUCCEEDED', message: 'done', detail: written({ [config]: 'c' }), occurredAt: at(21) },
    ]);
    await manifests.recordRun({ id: retry, nodeId: node.id }, at(22));
    expect((await inspector.view(node.id))?.files).toEqual([
      { path: config, sha256: sha256('c'), step: 'APPLY_IGNITION' },
      { path: unit, sha256: sha256('u'), step: 'INSTALL_SERVICES' },
    ]);
  });

  it('names each file edited or removed by hand with what was recorded and what is there: DRIFTED, until it is restored', async () => {
    const node = await joined('w-drift');
    const [unit, conf, gone] = ['drift-kubelet.service', 'drift-kubelet.conf', 'drift-gone'].map((name) => join(dir, name));
    await installed(node, { APPLY_IGNITION: { [unit]: '[Unit]\n', [conf]: 'a=1\n', [gone]: 'x' } });
    await writeFile(unit, '[Unit]\n# edited by hand\n');
    await unlink(gone);

    const drifted = await inspector.inspect(node.id);
    expect(drifted.state).toBe('DRIFTED');
    expect(drifted.drift).toEqual([
      { path: gone, expected: sha256('x'), found: null },
      { path: unit, expected: sha256('[Unit]\n'), found: sha256('[Unit]\n# edited by hand\n') },
    ].sort((a, b) => a.path.localeCompare(b.path)));
    expect((await inspector.view(node.id))?.state).toBe('DRIFTED');

    await writeFile(unit, '[Unit]\n');
    await writeFile(gone, 'x');
    expect(await inspector.inspect(node.id)).toMatchObject({ state: 'CURRENT', drift: [] });
  });

  it('drops what an inspection of an older record found once an install recorded the node anew meanwhile', async () => {
    const node = await joined('w-reinstalled');
    const unit = join(dir, 'reinstalled.service');
    const first = await installed(node, { APPLY_IGNITION: { [unit]: 'old' } });
    await writeFile(unit, 'edited');
    const second = await installed(node, { APPLY_IGNITION: { [unit]: 'new' } });
    // The first record's inspection ends after the second install recorded the node.
    expect(await manifests.saveInspection(node.id, first, { inspectedAt: new Date(), drift: [{ path: unit, expected: sha256('old'), found: sha256('edited') }] })).toMatchObject({ runId: second, inspectedAt: null, drift: [] });
    expect((await inspector.view(node.id))?.state).toBe('UNINSPECTED');
  });

  it('keeps the drift found before beside the reason when the host cannot be reached', async () => {
    const node = await joined('w-unreachable');
    const unit = join(dir, 'unreachable.service');
    await installed(node, { APPLY_IGNITION: { [unit]: 'a' } });
    await writeFile(unit, 'b');
    expect((await inspector.inspect(node.id)).state).toBe('DRIFTED');
    await nodes.update(node.id, { sshPort: 1 });

    const unreachable = await inspector.inspect(node.id);
    expect(unreachable).toMatchObject({ state: 'DRIFTED', drift: [{ path: unit, found: sha256('b') }], inspectionProblem: { code: 'ssh.unreachable' } });
  });

  it('calls a host installed from another artifact set than the cluster\'s now OUTDATED', async () => {
    const node = await joined('w-outdated');
    await installed(node, { APPLY_IGNITION: { [join(dir, 'outdated')]: 'a' } }, 'd'.repeat(64));
    expect(await inspector.inspect(node.id)).toMatchObject({ state: 'OUTDATED', onClusterSet: false, drift: [] });
    clusterSet = 'd'.repeat(64);
    try {
      // The cluster's set is read again at most every 10 s.
      expect((await inspector.view(node.id))?.state).toBe('OUTDATED');
      await clock.advance(10_000);
      expect((await inspector.view(node.id))?.state).toBe('CURRENT');
    } finally {
      clusterSet = 'c'.repeat(64);
      await clock.advance(10_000);
    }
  });

  it('refuses to inspect a node no install recorded, and records nothing for a run whose agent said nothing of its files', async () => {
    const node = await joined('w-none');
    await expect(inspector.inspect(node.id)).rejects.toThrow('no install recorded what w-none runs');
    const runId = randomUUID();
    await dataSource.getRepository(InstallRunEntity).insert({ id: runId, nodeId: node.id, status: 'SUCCEEDED', requestedBy: 'alice' });
    await dataSource.getRepository(StepEventEntity).insert({ runId, seq: 1, step: 'START_KUBELET', status: 'SUCCEEDED', message: 'done', detail: {}, occurredAt: new Date() });
    expect(await manifests.recordRun({ id: runId, nodeId: node.id }, new Date())).toBeNull();
    expect(await inspector.view(node.id)).toBeNull();
  });

  it('queues one inspection per joined node with a record on its host\'s queue, and the job inspects it', async () => {
    const node = await joined('w-periodic', '127.0.0.1');
    const unit = join(dir, 'periodic.service');
    await installed(node, { APPLY_IGNITION: { [unit]: 'a' } });
    await joined('w-unrecorded', '127.0.0.9');
    jobs.queued.length = 0;

    await inspector.queueAll();
    expect(jobs.queued.map((job) => job.payload['hostname'])).not.toContain('w-unrecorded');
    expect(jobs.queued.find((job) => job.payload['nodeId'] === node.id)).toMatchObject({ task: INSPECT_TASK, options: { key: `${INSPECT_TASK}:${node.id}`, queue: hostQueue('127.0.0.1'), maxAttempts: 1 } });

    await writeFile(unit, 'changed');
    await jobs.run(INSPECT_TASK, { nodeId: node.id });
    expect((await inspector.view(node.id))?.drift).toEqual([{ path: unit, expected: sha256('a'), found: sha256('changed') }]);
  });

  it('counts joined hosts with a record by cluster and state for the metrics, leaving out nodes no longer joined', async () => {
    const drifted = await joined('w-count');
    const unit = join(dir, 'count.service');
    await installed(drifted, { APPLY_IGNITION: { [unit]: 'a' } });
    await writeFile(unit, 'b');
    await inspector.inspect(drifted.id);
    const outdated = await joined('w-count-old');
    await installed(outdated, { APPLY_IGNITION: { [join(dir, 'count-old')]: 'a' } }, 'e'.repeat(64));
    const leaving = await joined('w-count-leaving', '127.0.0.1', 'REMOVING');
    await installed(leaving, { APPLY_IGNITION: { [join(dir, 'count-leaving')]: 'a' } });

    const counts = await inspector.countByState();
    const of = (node: NodeEntity) => counts.filter((count) => count.clusterId === node.clusterId);
    expect(of(drifted)).toEqual([{ clusterId: drifted.clusterId, state: 'DRIFTED', count: 1 }]);
    expect(of(outdated)).toEqual([{ clusterId: outdated.clusterId, state: 'OUTDATED', count: 1 }]);
    expect(of(leaving)).toEqual([]);

    // What node lists show: each node's state in the order asked, null for one no install recorded.
    const unrecorded = await joined('w-count-none', '127.0.0.1', 'INSTALLING');
    expect(await inspector.statesOf([drifted, unrecorded, outdated].map((node) => ({ nodeId: node.id, clusterId: node.clusterId })))).toEqual(['DRIFTED', null, 'OUTDATED']);
  });
});
