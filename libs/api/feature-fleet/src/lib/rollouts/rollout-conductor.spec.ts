import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterEntity, type Database, type NodeEntity, NodeStore, RolloutStore, hostQueue, openDatabase } from '@ccos/api/data-access-db';
import { RecordingJobs, createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { sealCredentials } from '@ccos/api/data-access-hosts';
import type { NodeSummary } from '@ccos/api/data-access-kube';
import { SshPool } from '@ccos/api/data-access-ssh';
import type { AskedAction, AuditEntry } from '@ccos/api/util-graphql';
import { SecretBox } from '@ccos/api/util-secrets';
import { type FileDrift, type InstallStep, type ManifestFile, hostManifestState } from '@ccos/shared/domain';
import { FakeClock } from '@ccos/shared/util-timing/testing';
import { CONDUCT_TASK, ROLLOUT_NODE_TASK, RolloutConductor, nodeBackFrom } from './rollout-conductor';

/**
 * What the conductor decides, on a real database with virtual time: which nodes start under the
 * budget (nodes NotReady or cordoned by anyone count against it), nothing before the maintenance
 * window opens, and the rollout's end. The nodes' own phases (drain, reboot over SSH) are shown on
 * lab hosts by test/fleet/rollouts.test.ts.
 */
describe('rollout conductor: budget and maintenance window', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let nodes: NodeStore;
  let rollouts: RolloutStore;
  const clock = new FakeClock('2026-12-07T17:00:00.000Z', false);
  const secrets = new SecretBox('a-test-secret-key-of-at-least-32-characters');
  const jobs = new RecordingJobs();
  const audit: AuditEntry[] = [];
  /** The cluster's Nodes as its watch has them, by name. */
  const cluster = new Map<string, Pick<NodeSummary, 'name' | 'ready' | 'unschedulable'>>();
  let conductor: RolloutConductor;
  // UPGRADE and REAPPLY rollouts run on this one (below).
  let applying: RolloutConductor;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    nodes = new NodeStore(dataSource, () => undefined);
    rollouts = new RolloutStore(dataSource);
    conductor = new RolloutConductor({
      rollouts,
      nodes,
      jobs,
      clusters: { watch: async () => ({ client: {} as never, nodes: () => [...cluster.values()] as NodeSummary[], podsOnNode: () => null }) },
      ssh: new SshPool({ maxSessions: 1 }),
      secrets,
      audit: { record: async (entry) => void audit.push(entry) },
      clock,
      intervalMs: 60_000,
      logger: pino({ level: 'silent' }),
    });
    applying = new RolloutConductor({
      rollouts,
      nodes,
      jobs: new RecordingJobs(),
      clusters: { watch: async () => ({ client: {} as never, nodes: () => [...cluster.values()] as NodeSummary[], podsOnNode: () => null }) },
      ssh: new SshPool({ maxSessions: 1 }),
      secrets,
      audit: { record: async () => undefined },
      clock: new FakeClock('2026-12-07T17:00:00.000Z'),
      intervalMs: 60_000,
      pollMs: 10,
      drain: async () => ({ ok: true, evicted: [], skipped: [] }),
      inspections: {
        queue: async () => undefined,
        view: async (nodeId) => records.get(nodeId) ?? null,
        standingsOf: async (members) => members.map(({ nodeId }) => {
          const record = records.get(nodeId);
          return record ? { state: hostManifestState({ inspectedAt: new Date(), drift: record.drift }, record.onClusterSet), onClusterSet: record.onClusterSet } : null;
        }),
      },
      applyRuns: {
        apply: async (nodeId, steps, actor) => {
          const id = randomUUID();
          started.push({ nodeId, steps, actor });
          runStatus.set(id, 'RUNNING');
          return { id };
        },
        run: async (id) => ({ id, status: runStatus.get(id) ?? 'FAILED', reason: runStatus.get(id) === 'FAILED' ? 'APPLY_IGNITION failed: the machine config server answered 503' : null, reasonCoded: null }),
      },
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const newCluster = async (): Promise<string> => {
    const id = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id, name: `c-${id.slice(0, 8)}`, apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    return id;
  };
  const joined = async (clusterId: string, hostname: string, ip: string): Promise<NodeEntity> => {
    cluster.set(hostname, { name: hostname, ready: true, unschedulable: false });
    return nodes.create({ clusterId, hostname, ip, sshPort: 22, sshUser: 'root', ...sealCredentials(secrets, { kind: 'PASSWORD', password: 'pw' }), status: 'JOINED' });
  };
  const phases = async (rolloutId: string) => (await rollouts.nodesOf(rolloutId)).map((node) => `${node.nodeName}:${node.phase}`);
  const nodeJobs = () => jobs.queued.filter((job) => job.task === ROLLOUT_NODE_TASK);
  const input = (clusterId: string) => ({ clusterId, kind: 'REBOOT' as const, nodeIds: null, labels: [], maxUnavailable: 1, maxUnavailableIsPercent: false, maintenanceWindow: null, pauseOnAlerts: [], drainTimeoutSeconds: 600, readyTimeoutSeconds: 600 });

  it('starts nothing while the window is closed, says when it opens, and starts the first node once it is open', async () => {
    const clusterId = await newCluster();
    await joined(clusterId, 'w-a1', '198.18.0.31');
    await joined(clusterId, 'w-a2', '198.18.0.32');
    // 02:00–03:00 in Shanghai is 18:00–19:00 UTC; the clock says 17:00 UTC.
    const rollout = await conductor.startRollout({ ...input(clusterId), maintenanceWindow: { cron: '0 2 * * *', durationMinutes: 60, timeZone: 'Asia/Shanghai' } }, 'ops');
    const queuedBefore = nodeJobs().length;

    await conductor.conduct(rollout.id);
    expect(await phases(rollout.id)).toEqual(['w-a1:PENDING', 'w-a2:PENDING']);
    expect(nodeJobs()).toHaveLength(queuedBefore);
    expect((await rollouts.get(rollout.id)).waitingFor).toMatchObject({ code: 'rollout.waiting.window', params: { opensAt: '2026-12-07T18:00:00.000Z' } });
    // Looked at again when it opens.
    expect(jobs.queued.at(-1)).toMatchObject({ task: CONDUCT_TASK, payload: { rolloutId: rollout.id }, options: { runAt: new Date('2026-12-07T18:00:00.000Z'), queue: `cluster:${clusterId}` } });

    clock.elapse(60 * 60_000);
    await conductor.conduct(rollout.id);
    expect(await phases(rollout.id)).toEqual(['w-a1:DRAIN', 'w-a2:PENDING']);
    expect((await rollouts.get(rollout.id)).waitingFor).toBeNull();
    expect(nodeJobs().at(-1)).toMatchObject({ payload: { rolloutId: rollout.id }, options: { queue: hostQueue('198.18.0.31') } });
    await conductor.cancel(rollout.id, 'ops');
  });

  it('counts a node NotReady or cordoned by anyone against the budget, naming them, and ends when every node is done', async () => {
    clock.elapse(24 * 3600_000);
    const clusterId = await newCluster();
    const [b1, b2, b3] = [await joined(clusterId, 'w-b1', '198.18.0.41'), await joined(clusterId, 'w-b2', '198.18.0.42'), await joined(clusterId, 'w-b3', '198.18.0.43')];
    cluster.set('w-b3', { name: 'w-b3', ready: false, unschedulable: false });
    const rollout = await conductor.startRollout({ ...input(clusterId), maxUnavailable: 2 }, 'ops');
    await conductor.conduct(rollout.id);
    // w-b3 is down by itself: one slot left, for w-b1.
    expect(await phases(rollout.id)).toEqual(['w-b1:DRAIN', 'w-b2:PENDING', 'w-b3:PENDING']);

    // w-b1 is cordoned by the rollout; w-b2 waits while w-b3 is still down.
    cluster.set('w-b1', { name: 'w-b1', ready: true, unschedulable: true });
    await conductor.conduct(rollout.id);
    expect((await rollouts.get(rollout.id)).waitingFor).toMatchObject({ code: 'rollout.waiting.budget', params: { unavailable: 2, nodes: 3, names: 'w-b1, w-b3', allowed: 2 } });

    // w-b1 done and back; w-b3 back: w-b2 and w-b3 start together.
    await rollouts.updateNode(rollout.id, b1?.id ?? '', { phase: 'DONE' });
    cluster.set('w-b1', { name: 'w-b1', ready: true, unschedulable: false });
    cluster.set('w-b3', { name: 'w-b3', ready: true, unschedulable: false });
    await conductor.conduct(rollout.id);
    expect(await phases(rollout.id)).toEqual(['w-b1:DONE', 'w-b2:DRAIN', 'w-b3:DRAIN']);

    await rollouts.updateNode(rollout.id, b2?.id ?? '', { phase: 'DONE' });
    // w-b3 is being removed by hand meanwhile: skipped, wherever it was, so it holds no slot.
    await nodes.transition(b3?.id ?? '', 'REMOVAL_STARTED', null);
    await conductor.conduct(rollout.id);
    expect(await phases(rollout.id)).toEqual(['w-b1:DONE', 'w-b2:DONE', 'w-b3:SKIPPED']);
    expect((await rollouts.node(rollout.id, b3?.id ?? ''))?.problem).toMatchObject({ code: 'rollout.nodeRemoved', params: { hostname: 'w-b3', status: 'REMOVING' } });
    // And with nothing left to start, the same pass ended it.
    expect(await rollouts.get(rollout.id)).toMatchObject({ status: 'SUCCEEDED', reason: { code: 'rollout.succeeded', params: { count: 3 } } });
    expect(audit.filter((entry) => entry.targetId === rollout.id).map((entry) => entry.action)).toEqual(['rollout.started', 'rollout.succeeded']);
    expect(audit.filter((entry) => entry.targetId === b3?.id).map((entry) => entry.action)).toEqual(['rollout.node.started', 'rollout.node.skipped']);
  });

  it('does not start a node remediation is working on, and counts it against the budget until remediation is over', async () => {
    clock.elapse(24 * 3600_000);
    const clusterId = await newCluster();
    const [c1] = [await joined(clusterId, 'w-c1', '198.18.0.51'), await joined(clusterId, 'w-c2', '198.18.0.52')];
    const restarting = { rung: 'RESTART_KUBELET' as const, startedAt: new Date(clock.now()).toISOString(), deadline: new Date(clock.now() + 300_000).toISOString(), rungs: ['RESTART_KUBELET' as const], exhausted: false };
    await nodes.update(c1?.id ?? '', { remediation: restarting });
    const rollout = await conductor.startRollout(input(clusterId), 'ops');
    await conductor.conduct(rollout.id);
    expect(await phases(rollout.id)).toEqual(['w-c1:PENDING', 'w-c2:PENDING']);
    expect((await rollouts.get(rollout.id)).waitingFor).toMatchObject({ code: 'rollout.waiting.budget', params: { unavailable: 1, names: 'w-c1', allowed: 1 } });

    await nodes.update(c1?.id ?? '', { remediation: null });
    await conductor.conduct(rollout.id);
    expect(await phases(rollout.id)).toEqual(['w-c1:DRAIN', 'w-c2:PENDING']);
    await conductor.cancel(rollout.id, 'ops');
  });

  it('refuses nodes that are not joined or were not installed here, and a second rollout on the cluster', async () => {
    const clusterId = await newCluster();
    const member = await joined(clusterId, 'w-c1', '198.18.0.51');
    const discovered = await nodes.create({ clusterId, hostname: 'w-c2', status: 'JOINED' });
    await expect(conductor.startRollout({ ...input(clusterId), nodeIds: [member.id, discovered.id] }, 'ops')).rejects.toMatchObject({ code: 'BAD_USER_INPUT', extensions: { field: 'input.nodeIds.1', problemCode: 'rollout.nodeNotEligible' } });
    // No Alertmanager to ask: a rollout that would pause on alerts is refused.
    await expect(conductor.startRollout({ ...input(clusterId), pauseOnAlerts: ['KubeletDown'] }, 'ops')).rejects.toMatchObject({ code: 'BAD_USER_INPUT', extensions: { field: 'input.pauseOnAlerts', problemCode: 'rollout.noAlertmanager' } });
    const first = await conductor.startRollout({ ...input(clusterId), nodeIds: [member.id] }, 'ops');
    await expect(conductor.startRollout(input(clusterId), 'ops')).rejects.toMatchObject({ code: 'CONFLICT', extensions: { rolloutId: first.id } });
    await conductor.pause(first.id, 'ops');
    await expect(conductor.pause(first.id, 'ops')).rejects.toMatchObject({ code: 'FAILED_PRECONDITION' });
    expect((await conductor.resume(first.id, 'ops')).status).toBe('RUNNING');
  });

  it('asks four-eyes before it starts anything, with each node\'s drain for the approver; once approved it is not asked again', async () => {
    const clusterId = await newCluster();
    const member = await joined(clusterId, 'w-h1', '198.18.0.61');
    const asked: AskedAction[] = [];
    const held = new RolloutConductor({
      rollouts,
      nodes,
      jobs: new RecordingJobs(),
      clusters: { watch: async () => ({ client: {} as never, nodes: () => [...cluster.values()] as NodeSummary[], podsOnNode: () => [] }) },
      ssh: new SshPool({ maxSessions: 1 }),
      secrets,
      audit: { record: async () => undefined },
      clock,
      intervalMs: 60_000,
      logger: pino({ level: 'silent' }),
      approvals: {
        gate: async (action) => {
          asked.push(action);
          throw new Error('held for a second person');
        },
      },
    });
    await expect(held.startRollout({ ...input(clusterId), nodeIds: [member.id] }, 'ops')).rejects.toThrow('held for a second person');
    expect(await rollouts.ofCluster(clusterId)).toEqual([]);
    expect(asked).toMatchObject([{ clusterId, action: 'START_ROLLOUT', target: 'REBOOT w-h1', actor: 'ops', params: { input: { nodeIds: [member.id], kind: 'REBOOT' } } }]);
    expect(await asked[0]?.preview?.()).toMatchObject({ nodes: ['w-h1'], allowed: 1 });
    const approved = await held.startRollout({ ...input(clusterId), nodeIds: [member.id] }, 'ops (approved by lead)', { approved: true });
    expect(approved).toMatchObject({ status: 'RUNNING', createdBy: 'ops (approved by lead)' });
    expect(asked).toHaveLength(1);
  });

  /** UPGRADE and REAPPLY: the agent's apply runs and the hosts' records, faked; time moves whenever every loop waits (a run polled every 10 ms costs no real time). */
  const records = new Map<string, { files: ManifestFile[]; drift: FileDrift[]; onClusterSet: boolean }>();
  const started: Array<{ nodeId: string; steps: readonly InstallStep[]; actor: string }> = [];
  const runStatus = new Map<string, 'RUNNING' | 'SUCCEEDED' | 'FAILED'>();
  const unit = '/etc/systemd/system/ccos-node-init.service';
  const files: ManifestFile[] = [
    { path: '/usr/local/bin/kubelet', sha256: 'a'.repeat(64), step: 'DOWNLOAD_BINARIES' },
    { path: unit, sha256: 'b'.repeat(64), step: 'APPLY_IGNITION' },
  ];
  const recorded = async (clusterId: string, hostname: string, ip: string, record: { drift?: FileDrift[]; onClusterSet?: boolean } | null): Promise<NodeEntity> => {
    const node = await joined(clusterId, hostname, ip);
    if (record) {
      records.set(node.id, { files, drift: record.drift ?? [], onClusterSet: record.onClusterSet ?? true });
    }
    return node;
  };

  const applyInput = (clusterId: string, kind: 'UPGRADE' | 'REAPPLY', nodeIds: string[] | null = null) =>
    ({ clusterId, kind, nodeIds, labels: [], maxUnavailable: 1, maxUnavailableIsPercent: false, maintenanceWindow: null, pauseOnAlerts: [], drainTimeoutSeconds: 600, readyTimeoutSeconds: 600 });
  const edited = [{ path: unit, expected: 'b'.repeat(64), found: 'c'.repeat(64) }];

  it('takes, unless nodes are named, those with work: UPGRADE the outdated and the drifted, REAPPLY the drifted on the cluster\'s set', async () => {
    const clusterId = await newCluster();
    const current = await recorded(clusterId, 'w-u1', '198.18.0.61', {});
    const outdated = await recorded(clusterId, 'w-u2', '198.18.0.62', { onClusterSet: false });
    const drifted = await recorded(clusterId, 'w-u3', '198.18.0.63', { drift: edited });
    const unrecorded = await recorded(clusterId, 'w-u4', '198.18.0.64', null);
    const taken = async (kind: 'UPGRADE' | 'REAPPLY', nodeIds: string[] | null = null) => {
      const rollout = await applying.startRollout(applyInput(clusterId, kind, nodeIds), 'ops');
      await applying.cancel(rollout.id, 'ops');
      return (await rollouts.nodesOf(rollout.id)).map((node) => node.nodeName);
    };
    expect(await taken('UPGRADE')).toEqual(['w-u2', 'w-u3']);
    expect(await taken('REAPPLY')).toEqual(['w-u3']);
    // Named: taken as named, but each needs a record, and a REAPPLY is no way to bring an outdated one back.
    expect(await taken('REAPPLY', [current.id])).toEqual(['w-u1']);
    await expect(applying.startRollout(applyInput(clusterId, 'UPGRADE', [unrecorded.id]), 'ops')).rejects.toMatchObject({ extensions: { field: 'input.nodeIds.0', problemCode: 'rollout.nodeNotRecorded' } });
    await expect(applying.startRollout(applyInput(clusterId, 'REAPPLY', [drifted.id, outdated.id]), 'ops')).rejects.toMatchObject({ extensions: { field: 'input.nodeIds.1', problemCode: 'rollout.reapplyOutdated' } });

    const clean = await newCluster();
    await recorded(clean, 'w-u5', '198.18.0.65', {});
    await expect(applying.startRollout(applyInput(clean, 'UPGRADE'), 'ops')).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', extensions: { messageCode: 'rollout.noneOutdated' } });
    await expect(applying.startRollout(applyInput(clean, 'REAPPLY'), 'ops')).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', extensions: { messageCode: 'rollout.noneDrifted' } });
  });

  it('drains, starts one apply run of the steps that wrote the drifted files, waits for it, and goes on to WAIT_READY; a failed run pauses with its reason and a resume starts another', async () => {
    const clusterId = await newCluster();
    const node = await recorded(clusterId, 'w-r1', '198.18.0.71', { drift: edited });
    const rollout = await applying.startRollout(applyInput(clusterId, 'REAPPLY'), 'ops');
    await applying.conduct(rollout.id);
    expect((await rollouts.node(rollout.id, node.id))?.phase).toBe('DRAIN');

    const first = applying.runNode(rollout.id, node.id);
    await expect.poll(() => started.filter((run) => run.nodeId === node.id).length).toBe(1);
    expect(started.at(-1)).toEqual({ nodeId: node.id, steps: ['APPLY_IGNITION', 'START_KUBELET'], actor: `rollout:${rollout.id}` });
    const step = await rollouts.node(rollout.id, node.id);
    expect(step).toMatchObject({ phase: 'APPLY' });
    const runId = step?.applyRunId ?? '';
    expect(runId).not.toBe('');
    // The run fails: the rollout pauses on the node, saying why.
    runStatus.set(runId, 'FAILED');
    await first;
    expect(await rollouts.get(rollout.id)).toMatchObject({ status: 'PAUSED', reason: { code: 'rollout.pausedOnNode' } });
    expect(await rollouts.node(rollout.id, node.id)).toMatchObject({ phase: 'APPLY', applyRunId: null, problem: { code: 'rollout.problem.applyFailed', params: { run: runId, reason: 'APPLY_IGNITION failed: the machine config server answered 503' } } });

    // Resumed: another run; this one succeeds, and the node waits for its kubelet and Ready.
    await applying.resume(rollout.id, 'ops');
    const second = applying.runNode(rollout.id, node.id);
    await expect.poll(() => started.filter((run) => run.nodeId === node.id).length).toBe(2);
    const retried = (await rollouts.node(rollout.id, node.id))?.applyRunId ?? '';
    expect(retried).not.toBe(runId);
    await applying.pause(rollout.id, 'ops');
    runStatus.set(retried, 'SUCCEEDED');
    await second;
    // Paused while its run went on: the node stayed in APPLY, and goes on from there once resumed.
    expect((await rollouts.node(rollout.id, node.id))?.phase).toBe('APPLY');
    expect(started.filter((run) => run.nodeId === node.id)).toHaveLength(2);
  });
});

describe('a rebooted node counts as back', () => {
  const after = 'b2c3d4e5-0000-4000-8000-000000000002';
  const before = 'a1b2c3d4-0000-4000-8000-000000000001';

  it('only once the kubelet of the new boot has reported, and Ready', () => {
    // The Node still shows the last boot's Ready: the new kubelet has not posted yet.
    expect(nodeBackFrom(after, { ready: true, bootId: before })).toMatchObject({ code: 'rollout.missing.nodeStatus' });
    expect(nodeBackFrom(after, { ready: true, bootId: null })).toMatchObject({ code: 'rollout.missing.nodeStatus' });
    expect(nodeBackFrom(after, undefined)).toMatchObject({ code: 'rollout.missing.nodeStatus' });
    // It has, and starts NotReady until its network is up.
    expect(nodeBackFrom(after, { ready: false, bootId: after })).toMatchObject({ code: 'rollout.missing.ready' });
    expect(nodeBackFrom(after, { ready: true, bootId: after })).toBeNull();
  });
});
