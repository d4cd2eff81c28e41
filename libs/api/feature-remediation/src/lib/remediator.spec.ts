import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterEntity, ClusterStore, type Database, type NodeEntity, NodeStore, RolloutStore, hostQueue, openDatabase } from '@ccos/api/data-access-db';
import { RecordingJobs, createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { sealCredentials } from '@ccos/api/data-access-hosts';
import { SshPool } from '@ccos/api/data-access-ssh';
import { type PlayedSshHost, startPlayedSshHost } from '@ccos/api/data-access-ssh/testing';
import type { AuditEntry } from '@ccos/api/util-graphql';
import { SecretBox } from '@ccos/api/util-secrets';
import type { RemediationPolicy } from '@ccos/shared/domain';
import type { CodedText } from '@ccos/shared/messages';
import { FakeClock } from '@ccos/shared/util-timing/testing';
import { EVALUATE_TASK, type MemberReplacer, RUNG_TASK, Remediator } from './remediator';

const POLICY: RemediationPolicy = { enabled: true, paused: false, unhealthySeconds: 60, rungTimeoutSeconds: 120, maxUnhealthy: 1, maxUnhealthyIsPercent: false };

/** The engine as the remediator sees it: the handlers it registers, and what it queues (run by the test). */
class RemediationJobs extends RecordingJobs {
  /** Runs the last rung queued for the node, as a worker would. */
  runRungOf(nodeId: string): Promise<void> {
    return this.run(RUNG_TASK, (job) => job.payload['nodeId'] === nodeId);
  }
}

/** A member's host over real SSH: it records each command; a reboot drops the connection, a failing kubelet restart says why. */
class PlayedHost {
  readonly commands: string[] = [];
  kubeletRestartFails = false;
  private played: PlayedSshHost | undefined;

  get port(): number {
    return this.played?.port ?? 0;
  }

  async start(): Promise<void> {
    this.played = await startPlayedSshHost((command, stream, client) => {
      this.commands.push(command.replace(/^.*exec /, ''));
      stream.stderr.write('ccos-exec-pid:42\n');
      if (command.endsWith("'reboot'")) {
        client.end();
        return;
      }
      if (this.kubeletRestartFails) {
        stream.stderr.write('Job for kubelet.service failed because the control process exited with error code.\n');
      }
      stream.exit(this.kubeletRestartFails ? 1 : 0);
      stream.end();
    }, 'pw');
  }

  async stop(): Promise<void> {
    await this.played?.stop();
  }
}

describe('remediator: the ladder of rungs per the cluster\'s policy, on a real database and real SSH', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let nodes: NodeStore;
  let clusters: ClusterStore;
  const clock = new FakeClock('2026-12-05T10:00:00.000Z', false);
  const secrets = new SecretBox('a-test-secret-key-of-at-least-32-characters');
  const host = new PlayedHost();
  const jobs = new RemediationJobs();
  const audit: AuditEntry[] = [];
  const probed: string[] = [];
  const replacements: Array<{ nodeId: string; skipHostSide: string | undefined }> = [];
  let replaceable = new Set<string>();
  let replacement: { started: boolean; text: CodedText } = { started: true, text: { code: 'autoscaling.replacing', params: {}, message: 'replacing' } };
  let remediator: Remediator;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    nodes = new NodeStore(dataSource, () => undefined);
    clusters = new ClusterStore(dataSource);
    await host.start();
    const replacer: MemberReplacer = {
      replaceableMembers: async () => replaceable,
      replaceMember: async (nodeId, _actor, removal) => {
        replacements.push({ nodeId, skipHostSide: removal.skipHostSide });
        return replacement;
      },
    };
    remediator = new Remediator({
      clusters,
      nodes,
      jobs,
      ssh: new SshPool({ maxSessions: 2 }),
      secrets,
      audit: { record: async (entry) => void audit.push(entry) },
      probe: { queue: async (node) => void probed.push(node.id) },
      rollouts: new RolloutStore(dataSource),
      replacer,
      clock,
      intervalMs: 60_000,
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await host.stop();
    await dataSource?.destroy();
    await database?.drop();
  });

  const cluster = async (policy: RemediationPolicy = POLICY): Promise<string> => {
    const id = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id, name: `c-${id.slice(0, 8)}`, apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN', remediationPolicy: policy });
    return id;
  };
  /** A joined member of the cluster whose Ready condition is `ready` since `secondsAgo`; only 127.0.0.1 has a host that answers. */
  const member = (clusterId: string, hostname: string, ready: 'True' | 'False', secondsAgo: number, ip = '127.0.0.1'): Promise<NodeEntity> =>
    nodes.create({
      clusterId,
      hostname,
      ip,
      sshPort: host.port,
      sshUser: 'root',
      ...sealCredentials(secrets, { kind: 'PASSWORD', password: 'pw' }),
      status: 'JOINED',
      readyStatus: ready,
      readySince: new Date(clock.now() - secondsAgo * 1000),
    });
  const actions = (nodeId: string) => audit.filter((entry) => entry.targetId === nodeId).map((entry) => `${entry.action} ${entry.result}`);

  it('restarts the kubelet of a member unhealthy past unhealthySeconds, as a job on its host\'s queue, and leaves one unhealthy for less alone', async () => {
    const clusterId = await cluster({ ...POLICY, maxUnhealthy: 2 });
    const sick = await member(clusterId, 'sick', 'False', 90);
    const fresh = await member(clusterId, 'fresh', 'False', 30, '127.0.0.2');
    await remediator.evaluate(clusterId);

    expect((await nodes.get(sick.id)).remediation).toMatchObject({ rung: 'RESTART_KUBELET', rungs: ['RESTART_KUBELET'], exhausted: false, deadline: new Date(clock.now() + 120_000).toISOString() });
    expect((await nodes.get(fresh.id)).remediation).toBeNull();
    expect(jobs.queued.filter((job) => job.task === RUNG_TASK && job.payload['nodeId'] === fresh.id)).toEqual([]);
    expect(jobs.queued.at(-1)).toMatchObject({ task: RUNG_TASK, payload: { nodeId: sick.id, rung: 'RESTART_KUBELET' }, options: { key: `${RUNG_TASK}:${sick.id}`, queue: hostQueue('127.0.0.1'), maxAttempts: 1 } });

    await jobs.runRungOf(sick.id);
    expect(host.commands.at(-1)).toBe("'systemctl' 'restart' 'kubelet'");
    expect(actions(sick.id)).toEqual(['remediation.restart_kubelet SUCCESS']);
    expect(probed.at(-1)).toBe(sick.id);
  });

  it('audits a rung whose command fails as a failure with the host\'s words, and moves on to the reboot at the rung\'s deadline; a reboot that drops the session worked', async () => {
    const clusterId = await cluster();
    const sick = await member(clusterId, 'stubborn', 'False', 90);
    await remediator.evaluate(clusterId);
    host.kubeletRestartFails = true;
    try {
      await jobs.runRungOf(sick.id);
    } finally {
      host.kubeletRestartFails = false;
    }
    const failed = audit.findLast((entry) => entry.targetId === sick.id);
    expect(failed).toMatchObject({ action: 'remediation.restart_kubelet', result: 'FAILURE', detail: { reasonCode: 'remediation.rungFailed' } });
    expect(String(failed?.detail?.['reason'])).toContain('Job for kubelet.service failed');

    await remediator.evaluate(clusterId);
    expect((await nodes.get(sick.id)).remediation?.rung).toBe('RESTART_KUBELET');
    await clock.advance(121_000);
    await remediator.evaluate(clusterId);
    expect((await nodes.get(sick.id)).remediation).toMatchObject({ rung: 'REBOOT', rungs: ['RESTART_KUBELET', 'REBOOT'] });
    await jobs.runRungOf(sick.id);
    expect(host.commands.at(-1)).toBe("'systemctl' 'reboot'");
    expect(actions(sick.id)).toEqual(['remediation.restart_kubelet FAILURE', 'remediation.reboot SUCCESS']);
  });

  it('records a member healthy again as recovered and clears its ladder', async () => {
    const clusterId = await cluster();
    const sick = await member(clusterId, 'recovers', 'False', 90);
    await remediator.evaluate(clusterId);
    await nodes.update(sick.id, { readyStatus: 'True', readySince: new Date(clock.now()) });
    await remediator.evaluate(clusterId);
    expect((await nodes.get(sick.id)).remediation).toBeNull();
    expect(actions(sick.id)).toEqual(['remediation.recovered SUCCESS']);
  });

  it('holds the whole ladder while more members are unhealthy than the cap, says so once, and says when it lets go', async () => {
    const clusterId = await cluster();
    const first = await member(clusterId, 'held-1', 'False', 90);
    const second = await member(clusterId, 'held-2', 'False', 90, '127.0.0.2');
    await remediator.evaluate(clusterId);
    await remediator.evaluate(clusterId);
    expect((await nodes.get(first.id)).remediation).toBeNull();
    expect((await nodes.get(second.id)).remediation).toBeNull();
    expect((await clusters.find(clusterId))?.remediationHeld).toMatchObject({ unhealthy: 2, members: 2, cap: 1 });
    const ofCluster = () => audit.filter((entry) => entry.targetId === clusterId).map((entry) => entry.action);
    expect(ofCluster()).toEqual(['remediation.held']);

    await nodes.update(second.id, { readyStatus: 'True', readySince: new Date(clock.now()) });
    await remediator.evaluate(clusterId);
    expect((await clusters.find(clusterId))?.remediationHeld).toBeNull();
    expect(ofCluster()).toEqual(['remediation.held', 'remediation.released']);
    expect((await nodes.get(first.id)).remediation?.rung).toBe('RESTART_KUBELET');
  });

  it('replaces a member its node group has a spare for, past the reboot, without its host when the host does not answer; no spare ends the ladder', async () => {
    const clusterId = await cluster();
    const gone = await member(clusterId, 'gone', 'False', 90);
    await nodes.update(gone.id, { hostHealth: { checkedAt: new Date(clock.now()).toISOString(), reachable: false, kubeletActive: null, reason: null } });
    replaceable = new Set([gone.id]);
    await remediator.evaluate(clusterId);
    await clock.advance(121_000);
    await remediator.evaluate(clusterId);
    await clock.advance(121_000);
    await remediator.evaluate(clusterId);
    expect((await nodes.get(gone.id)).remediation).toMatchObject({ rung: 'REPLACE', rungs: ['RESTART_KUBELET', 'REBOOT', 'REPLACE'] });
    replacement = { started: false, text: { code: 'autoscaling.noSpareToReplace', params: { group: 'pool', hostname: 'gone' }, message: 'no spare' } };
    await jobs.runRungOf(gone.id);
    expect(replacements.at(-1)).toEqual({ nodeId: gone.id, skipHostSide: expect.stringMatching(/./) });
    expect((await nodes.get(gone.id)).remediation?.exhausted).toBe(true);
    expect(actions(gone.id).at(-1)).toBe('remediation.replace FAILURE');
  });

  it('leaves a member a rollout is rebooting to the rollout, and remediates it once the rollout stopped on it', async () => {
    const clusterId = await cluster();
    const rebooting = await member(clusterId, 'rolling', 'False', 400);
    const rollouts = new RolloutStore(dataSource);
    const rollout = await rollouts.create(
      { clusterId, kind: 'REBOOT', maxUnavailable: 1, maxUnavailableIsPercent: false, maintenanceWindow: null, pauseOnAlerts: [], drainTimeoutSeconds: 60, readyTimeoutSeconds: 60, createdBy: 'alice' },
      [{ nodeId: rebooting.id, nodeName: rebooting.hostname }],
      new Date(clock.now()),
    );
    await rollouts.updateNode(rollout?.id ?? '', rebooting.id, { phase: 'WAIT_READY' });
    await remediator.evaluate(clusterId);
    expect((await nodes.get(rebooting.id)).remediation).toBeNull();
    expect(jobs.queued.filter((job) => job.task === RUNG_TASK && job.payload['nodeId'] === rebooting.id)).toEqual([]);

    // The rollout gave up on it (it did not come back): remediation takes it.
    await rollouts.updateNode(rollout?.id ?? '', rebooting.id, { problem: { code: 'rollout.problem.notBack', params: { seconds: 600, missing: 'Node Ready' }, message: 'the host did not come back within 600 s: Node Ready' } });
    await remediator.evaluate(clusterId);
    expect((await nodes.get(rebooting.id)).remediation).toMatchObject({ rung: 'RESTART_KUBELET' });
  });

  it('queues one evaluation per cluster whose policy is on, keyed and serialised per cluster', async () => {
    const off = await cluster({ ...POLICY, enabled: false });
    const on = await cluster();
    jobs.queued.length = 0;
    await remediator.queueAll();
    const evaluations = jobs.queued.filter((job) => job.task === EVALUATE_TASK);
    expect(evaluations.map((job) => job.payload['clusterId'])).toContain(on);
    expect(evaluations.map((job) => job.payload['clusterId'])).not.toContain(off);
    expect(evaluations.find((job) => job.payload['clusterId'] === on)?.options).toEqual({ key: `${EVALUATE_TASK}:${on}`, queue: `cluster:${on}`, maxAttempts: 1 });
  });
});
