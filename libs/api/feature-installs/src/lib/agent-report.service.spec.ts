import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterProbe } from '@ccos/api/data-access-cluster-connections';
import { type Database, AgentTokens, HostManifestStore, InstallRunStore, NodeStore, openDatabase } from '@ccos/api/data-access-db';
import { RecordingJobs, createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { type EventBus, type InstallProgressPayload, TOPICS, createInProcessEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { AgentReportService } from './agent-report.service';
import { UNOBSERVED_INSTALLS } from './install-metrics';
import { InstallProgress } from './install-progress';
import { type AgentControl, InstallService } from './install.service';
import type { ReportStepInput } from './report-step.input';
import { RunBootstrapIdentities } from './run-bootstrap-identities';

const logger = pino({ level: process.env['SPEC_LOG'] ?? 'silent' });
const CAPS = { events: 20, bytes: 64 * 1024, reserveEvents: 5, reserveBytes: 16 * 1024 };

/** These specs send step events only; asking the cluster or the hosts anything would be a defect. */
const NO_CLUSTER: ClusterProbe = {
  nodeState: () => Promise.reject(new Error('step events ask the cluster nothing')),
  pendingCsrNames: () => Promise.reject(new Error('step events ask the cluster nothing')),
  conflicts: () => Promise.reject(new Error('step events ask the cluster nothing')),
};
const NO_HOSTS: AgentControl = {
  channel: 'HTTPS',
  launch: () => Promise.reject(new Error('step events launch nothing')),
  stop: () => Promise.reject(new Error('step events stop nothing')),
};

describe('agent step events in batches (reportSteps)', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let bus: EventBus;
  let reports: AgentReportService;
  let clusterId: string;
  let now = new Date();

  beforeAll(async () => {
    database = await createTestDatabase('ccos_agent_reports');
    dataSource = await openDatabase({ url: database.url, maxConnections: 5 });
    clusterId = randomUUID();
    await dataSource.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'c', 'https://198.18.0.1:6443', '198.18.0.1', 'x', 'TOKEN')`, [clusterId]);
    bus = createInProcessEventBus();
    const runs = new InstallRunStore(dataSource);
    const tokens = new AgentTokens(dataSource, () => now);
    const nodes = new NodeStore(dataSource, nodeChangePublisher(bus));
    const identities = new RunBootstrapIdentities(runs, { clientFor: () => Promise.reject(new Error('step events ask the cluster nothing')) }, 'ccos-scaler-bootstrap', logger);
    const installs = new InstallService(runs, nodes, tokens, NO_HOSTS, identities, new InstallProgress(bus), logger, 90 * 60_000, UNOBSERVED_INSTALLS, new RecordingJobs());
    reports = new AgentReportService(runs, tokens, nodes, installs, NO_CLUSTER, new InstallProgress(bus), logger, new HostManifestStore(dataSource), UNOBSERVED_INSTALLS, CAPS);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(() => {
    now = new Date();
  });

  let hosts = 0;
  /** A node INSTALLING with a RUNNING run whose agent holds the token returned (or, for an apply run, a JOINED node). */
  const runningInstall = async (purpose: 'INSTALL' | 'APPLY' = 'INSTALL'): Promise<{ runId: string; nodeId: string; token: string }> => {
    hosts += 1;
    const nodeId = randomUUID();
    const runId = randomUUID();
    const { token, hash } = new AgentTokens(dataSource).issue();
    await dataSource.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, $5)`, [nodeId, clusterId, `worker-${hosts}`, `198.18.0.${10 + hosts}`, purpose === 'APPLY' ? 'JOINED' : 'INSTALLING']);
    await dataSource.query(
      `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at, purpose, start_step)
       VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '2 hours', now() + interval '1 hour', now(), $4, $5)`,
      [runId, nodeId, hash, purpose, purpose === 'APPLY' ? 'APPLY_IGNITION' : 'PREFLIGHT'],
    );
    return { runId, nodeId, token };
  };
  const progress = (runId: string, seq: number): ReportStepInput => ({ runId, seq, step: 'PREFLIGHT', status: 'PROGRESS', progress: seq, message: `checked ${seq}`, occurredAt: new Date() }) as ReportStepInput;
  const stored = async (runId: string) => {
    const events: Array<{ seq: number; message: string }> = await dataSource.query('SELECT seq, message FROM step_events WHERE run_id = $1 ORDER BY id', [runId]);
    const [run] = (await dataSource.query('SELECT event_count, event_bytes FROM install_runs WHERE id = $1', [runId])) as Array<{ event_count: number; event_bytes: string }>;
    return { seqs: events.map((event) => event.seq), messages: events.map((event) => event.message), count: run?.event_count, bytes: Number(run?.event_bytes) };
  };
  /** The seqs `installProgress` subscribers of the node hear, in order. */
  const heard = (nodeId: string): number[] => {
    const seqs: number[] = [];
    void (async () => {
      for await (const payload of bus.subscribe(TOPICS.INSTALL_PROGRESS, nodeId) as AsyncIterable<InstallProgressPayload>) {
        seqs.push(payload.seq);
      }
    })();
    return seqs;
  };

  it('stores a batch sent out of order, with a seq twice, once and in seq order, and a re-sent batch as duplicates only', async () => {
    const { runId, nodeId, token } = await runningInstall();
    const subscriber = heard(nodeId);
    const first = { ...progress(runId, 2), message: 'first of seq 2' };
    const again = { ...progress(runId, 2), message: 'second of seq 2' };
    const answer = await reports.reportBatch(token, [progress(runId, 3), first, progress(runId, 1), again]);
    expect(answer).toEqual({ accepted: 3, duplicateSeqs: [], cancelRequested: false });
    const after = await stored(runId);
    expect(after.seqs).toEqual([1, 2, 3]);
    expect(after.messages[1]).toBe('first of seq 2');
    expect(after.count).toBe(3);

    const resent = await reports.reportBatch(token, [progress(runId, 1), progress(runId, 2), progress(runId, 3), progress(runId, 4)]);
    expect(resent).toEqual({ accepted: 4, duplicateSeqs: [1, 2, 3], cancelRequested: false });
    const twice = await stored(runId);
    expect(twice.seqs).toEqual([1, 2, 3, 4]);
    expect(twice.count).toBe(4);
    await expect.poll(() => subscriber).toEqual([1, 2, 3, 4]);
  });

  it('refuses a token of another run, a run id that is no run\'s, an expired token and a malformed one, storing nothing', async () => {
    const mine = await runningInstall();
    const other = await runningInstall();
    await expect(reports.reportBatch(other.token, [progress(mine.runId, 1)])).rejects.toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    await expect(reports.reportBatch(mine.token, [progress('run-1; DROP TABLE step_events', 1)])).rejects.toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    await expect(reports.reportBatch('agt_not-a-token-of-any-run', [progress(mine.runId, 1)])).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    await expect(reports.reportBatch('ses_a-session-token', [progress(mine.runId, 1)])).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    now = new Date(Date.now() + 2 * 60 * 60_000);
    await expect(reports.reportBatch(mine.token, [progress(mine.runId, 1)])).rejects.toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    expect((await stored(mine.runId)).seqs).toEqual([]);
    expect((await stored(other.runId)).seqs).toEqual([]);
  });

  it('takes a batch that would pass a cap event by event: progress up to the cap, then a step\'s end from the reserve', async () => {
    const { runId, token } = await runningInstall();
    await reports.reportBatch(token, Array.from({ length: CAPS.events - 1 }, (_, index) => progress(runId, index + 1)));
    const end = { runId, seq: CAPS.events + 1, step: 'PREFLIGHT', status: 'SUCCEEDED', occurredAt: new Date() } as ReportStepInput;
    const answer = await reports.reportBatch(token, [progress(runId, CAPS.events), end]);
    expect(answer.accepted).toBe(2);
    expect((await stored(runId)).count).toBe(CAPS.events + 1);
    await expect(reports.reportBatch(token, [progress(runId, CAPS.events + 2)])).rejects.toMatchObject({ extensions: { code: 'LIMIT_EXCEEDED' } });
    expect((await stored(runId)).seqs).toHaveLength(CAPS.events + 1);
  });

  it('moves the node along with a step that starts in the batch, and says an operator asked to cancel', async () => {
    const { runId, nodeId, token } = await runningInstall();
    const started = { runId, seq: 2, step: 'INSTALL_PACKAGES', status: 'STARTED', occurredAt: new Date() } as ReportStepInput;
    await reports.reportBatch(token, [progress(runId, 1), started]);
    const [node] = (await dataSource.query('SELECT status, status_reason_coded FROM nodes WHERE id = $1', [nodeId])) as Array<{ status: string; status_reason_coded: { code: string } }>;
    expect(node?.status).toBe('INSTALLING');
    expect(node?.status_reason_coded.code).toBe('node.stepRunning');

    await dataSource.query('UPDATE install_runs SET cancel_requested = true WHERE id = $1', [runId]);
    expect((await reports.reportBatch(token, [progress(runId, 3)])).cancelRequested).toBe(true);
  });

  it('answers events re-sent after the run ended as duplicates and refuses new ones', async () => {
    const { runId, token } = await runningInstall();
    await reports.reportBatch(token, [progress(runId, 1)]);
    await dataSource.query(`UPDATE install_runs SET status = 'FAILED', finished_at = now() WHERE id = $1`, [runId]);
    expect(await reports.reportBatch(token, [progress(runId, 1)])).toMatchObject({ accepted: 1, duplicateSeqs: [1] });
    await expect(reports.reportBatch(token, [progress(runId, 1), progress(runId, 2)])).rejects.toMatchObject({ extensions: { code: 'RUN_FINISHED' } });
    expect((await stored(runId)).seqs).toEqual([1]);
  });

  it('leaves an apply run\'s node JOINED whichever way the run ends, and records what a succeeded one wrote', async () => {
    const unit = '/etc/systemd/system/ccos-node-init.service';
    const succeeded = await runningInstall('APPLY');
    const step = (runId: string, seq: number, name: string, status: string, detail: Record<string, unknown> | null = null) => ({ runId, seq, step: name, status, occurredAt: new Date(), detail }) as ReportStepInput;
    await reports.reportBatch(succeeded.token, [
      step(succeeded.runId, 1, 'APPLY_IGNITION', 'STARTED'),
      step(succeeded.runId, 2, 'APPLY_IGNITION', 'SUCCEEDED', { written: { [unit]: 'b'.repeat(64) } }),
      step(succeeded.runId, 3, 'START_KUBELET', 'STARTED'),
      step(succeeded.runId, 4, 'START_KUBELET', 'SUCCEEDED', { running: { kernelRelease: '5.14.0', kubeletVersion: 'v1.31.4', kubeletFlags: [] } }),
    ]);
    const statusOf = async (nodeId: string) => ((await dataSource.query('SELECT status FROM nodes WHERE id = $1', [nodeId])) as Array<{ status: string }>)[0]?.status;
    const runStatus = async (runId: string) => ((await dataSource.query('SELECT status FROM install_runs WHERE id = $1', [runId])) as Array<{ status: string }>)[0]?.status;
    expect(await runStatus(succeeded.runId)).toBe('SUCCEEDED');
    expect(await statusOf(succeeded.nodeId)).toBe('JOINED');
    expect(await new HostManifestStore(dataSource).find(succeeded.nodeId)).toMatchObject({ runId: succeeded.runId, files: [{ path: unit, sha256: 'b'.repeat(64), step: 'APPLY_IGNITION' }], runningAtInstall: { kubeletVersion: 'v1.31.4' } });

    const failed = await runningInstall('APPLY');
    await reports.reportBatch(failed.token, [step(failed.runId, 1, 'APPLY_IGNITION', 'STARTED'), { ...step(failed.runId, 2, 'APPLY_IGNITION', 'FAILED'), message: 'the machine config server answered 503' } as ReportStepInput]);
    expect(await runStatus(failed.runId)).toBe('FAILED');
    expect(await statusOf(failed.nodeId)).toBe('JOINED');
  });
});
