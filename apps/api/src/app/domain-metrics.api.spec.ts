import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentTokens } from '@ccos/api/data-access-db';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const REPORT = 'mutation($input: ReportStepInput!) { reportStep(input: $input) { accepted duplicate } }';

/** The value of one sample of /metrics (labels in any order), or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) {
      continue;
    }
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]));
    if (Object.keys(found).length === Object.keys(labels).length && Object.entries(labels).every(([key, value]) => found[key] === value)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

/** An INSTALLING node with a RUNNING run, as installNode leaves them; its agent token. */
async function installingRunOf(harness: ApiHarness, clusterId: string, hostname: string, ip: string): Promise<{ nodeId: string; runId: string; token: string }> {
  const db = harness.api.dataSource;
  const nodeId = randomUUID();
  const runId = randomUUID();
  await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'INSTALLING')`, [nodeId, clusterId, hostname, ip]);
  const issued = new AgentTokens(db).issue();
  await db.query(
    `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '2 hours', now() + interval '2 hours', now())`,
    [runId, nodeId, issued.hash],
  );
  return { nodeId, runId, token: issued.token };
}

/** The cluster `metrics` the runs belong to (its API server is never reached). */
async function metricsCluster(harness: ApiHarness): Promise<string> {
  const clusterId = randomUUID();
  await harness.api.dataSource.query(
    `INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'metrics', 'https://10.0.0.1:6443', '10.0.0.1', 'x', 'TOKEN')`,
    [clusterId],
  );
  return clusterId;
}

const scrape = async (harness: ApiHarness) => (await fetch(`${harness.url}/metrics`)).text();

describe('domain metrics from install runs reported by an agent', () => {
  let harness: ApiHarness;
  let clusterId: string;

  beforeAll(async () => {
    // What is counted does not depend on the agent channel: plain HTTP keeps the agent calls simple.
    harness = await startApiHarness({ AGENT_PLAIN_HTTP: 'allow' });
    clusterId = await metricsCluster(harness);
  });
  afterAll(async () => {
    await harness?.stop();
  });

  const installingRun = (hostname: string, ip: string) => installingRunOf(harness, clusterId, hostname, ip);

  const metrics = () => scrape(harness);

  it('times each step from STARTED to its end, counts the run\'s outcome by failure code once, and the lag of every stored event', async () => {
    const { runId, token } = await installingRun('m1', '10.0.0.11');
    const base = Date.now() - 120_000;
    const at = (seconds: number) => new Date(base + seconds * 1000).toISOString();
    const report = async (seq: number, step: string, status: string, seconds: number, detail?: Record<string, unknown>) => {
      const result = await harness.gql<{ reportStep: { accepted: boolean; duplicate: boolean } }>(REPORT, { input: { runId, seq, step, status, occurredAt: at(seconds), ...(detail ? { detail } : {}) } }, token);
      expect(result.errors).toBeUndefined();
      return result.data?.reportStep;
    };
    const before = await metrics();
    const lagBefore = sample(before, 'ccos_agent_event_lag_seconds_count') ?? 0;
    expect(sample(before, 'ccos_installs_in_progress', { step: 'PREFLIGHT' })).toBe(1);

    await report(1, 'PREFLIGHT', 'STARTED', 0);
    await report(2, 'PREFLIGHT', 'PROGRESS', 1);
    await report(3, 'PREFLIGHT', 'SUCCEEDED', 3);
    // A re-send is stored once, so it is timed and counted once.
    expect(await report(3, 'PREFLIGHT', 'SUCCEEDED', 3)).toEqual({ accepted: true, duplicate: true });
    await report(4, 'DOWNLOAD_BINARIES', 'STARTED', 10);
    const during = await metrics();
    expect(sample(during, 'ccos_installs_in_progress', { step: 'DOWNLOAD_BINARIES' })).toBe(1);
    expect(sample(during, 'ccos_installs_in_progress', { step: 'PREFLIGHT' })).toBe(0);
    expect(sample(during, 'ccos_nodes', { cluster: 'metrics', status: 'INSTALLING' })).toBe(1);
    await report(5, 'DOWNLOAD_BINARIES', 'FAILED', 40, { code: 'DISK_FULL', hint: 'free some space' });

    const after = await metrics();
    expect(sample(after, 'ccos_install_step_duration_seconds_count', { step: 'PREFLIGHT', outcome: 'SUCCEEDED' })).toBe(1);
    expect(sample(after, 'ccos_install_step_duration_seconds_sum', { step: 'PREFLIGHT', outcome: 'SUCCEEDED' })).toBeCloseTo(3, 3);
    expect(sample(after, 'ccos_install_step_duration_seconds_bucket', { step: 'PREFLIGHT', outcome: 'SUCCEEDED', le: '1' })).toBe(0);
    expect(sample(after, 'ccos_install_step_duration_seconds_bucket', { step: 'PREFLIGHT', outcome: 'SUCCEEDED', le: '5' })).toBe(1);
    expect(sample(after, 'ccos_install_step_duration_seconds_sum', { step: 'DOWNLOAD_BINARIES', outcome: 'FAILED' })).toBeCloseTo(30, 3);
    expect(sample(after, 'ccos_install_runs_finished_total', { outcome: 'FAILED', failure_code: 'DISK_FULL' })).toBe(1);
    // Five events stored (the duplicate is not), each 80 to 120 s old when it arrived.
    expect((sample(after, 'ccos_agent_event_lag_seconds_count') ?? 0) - lagBefore).toBe(5);
    expect(sample(after, 'ccos_agent_event_lag_seconds_bucket', { le: '60' })).toBe(sample(before, 'ccos_agent_event_lag_seconds_bucket', { le: '60' }) ?? 0);
    expect((sample(after, 'ccos_agent_event_lag_seconds_bucket', { le: '300' }) ?? 0) - (sample(before, 'ccos_agent_event_lag_seconds_bucket', { le: '300' }) ?? 0)).toBe(5);
    expect(sample(after, 'ccos_installs_in_progress', { step: 'DOWNLOAD_BINARIES' })).toBe(0);
    expect(sample(after, 'ccos_nodes', { cluster: 'metrics', status: 'INSTALL_FAILED' })).toBe(1);
  });

  it('labels a failure code that is not a code as UNKNOWN, and a run ended by the service with its cause', async () => {
    const { runId, token } = await installingRun('m2', '10.0.0.12');
    const now = new Date().toISOString();
    const failed = await harness.gql(REPORT, { input: { runId, seq: 1, step: 'PREFLIGHT', status: 'FAILED', occurredAt: now, detail: { code: 'rm -rf / # free text' } } }, token);
    expect(failed.errors).toBeUndefined();
    const text = await metrics();
    expect(sample(text, 'ccos_install_runs_finished_total', { outcome: 'FAILED', failure_code: 'UNKNOWN' })).toBe(1);
    // A FAILED event with no STARTED before it has no duration to observe.
    expect(sample(text, 'ccos_install_step_duration_seconds_count', { step: 'PREFLIGHT', outcome: 'FAILED' })).toBeUndefined();
    expect(text).not.toContain('rm -rf');

    const cancelled = await installingRun('m3', '10.0.0.13');
    const operator = await harness.tokenFor('OPERATOR');
    const result = await harness.gql('mutation($id: ID!) { cancelInstall(nodeId: $id) { status } }', { id: cancelled.nodeId }, operator);
    expect(result.errors).toBeUndefined();
    // Cancelled again (refused: nothing runs) and counted once.
    expect((await harness.gql('mutation($id: ID!) { cancelInstall(nodeId: $id) { status } }', { id: cancelled.nodeId }, operator)).errors?.[0]?.extensions?.['code']).toBe('FAILED_PRECONDITION');
    expect(sample(await metrics(), 'ccos_install_runs_finished_total', { outcome: 'CANCELLED', failure_code: 'CANCELLED' })).toBe(1);
  });

  it('exposes the gauges of CSRs, removals, SSH and the approver with what this replica knows', async () => {
    const text = await metrics();
    expect(sample(text, 'ccos_csr_approval_window_seconds')).toBe(3600);
    expect(sample(text, 'ccos_ssh_sessions_in_use')).toBe(0);
    expect(sample(text, 'ccos_ssh_sessions_waiting')).toBe(0);
    for (const name of ['ccos_csrs_pending', 'ccos_csrs_pending_oldest_age_seconds', 'ccos_csr_approver_leader', 'ccos_removals_in_progress', 'ccos_removal_drain_blocked_seconds']) {
      expect(text).toContain(`# TYPE ${name} gauge`);
    }
    for (const name of ['ccos_csr_decisions_total', 'ccos_removal_runs_finished_total', 'ccos_evictions_refused_total']) {
      expect(text).toContain(`# TYPE ${name} counter`);
    }
  });
});

describe('domain metrics on two replicas of one database', () => {
  let harness: ApiHarness;
  let replica: ApiHarness;
  let clusterId: string;

  beforeAll(async () => {
    harness = await startApiHarness({ AGENT_PLAIN_HTTP: 'allow' });
    replica = await startApiHarness({ AGENT_PLAIN_HTTP: 'allow' }, { database: harness.database });
    clusterId = await metricsCluster(harness);
  });
  afterAll(async () => {
    await replica?.stop();
    await harness?.stop();
  });

  it('shared-state gauges agree, and an event is counted by the replica that stored it only', async () => {
    const { runId, token } = await installingRunOf(harness, clusterId, 'm4', '10.0.0.14');
    const scrapeBoth = async () => Promise.all([scrape(harness), scrape(replica)]);
    const [beforeA, beforeB] = await scrapeBoth();
    const occurredAt = new Date().toISOString();
    for (const [seq, status] of [[1, 'STARTED'], [2, 'SUCCEEDED']] as const) {
      // Sent to replica B, as a load balancer may.
      const result = await replica.gql(REPORT, { input: { runId, seq, step: 'PREFLIGHT', status, occurredAt } }, token);
      expect(result.errors).toBeUndefined();
    }
    const [afterA, afterB] = await scrapeBoth();
    const succeeded = { step: 'PREFLIGHT', outcome: 'SUCCEEDED' };
    const count = (text: string) => sample(text, 'ccos_install_step_duration_seconds_count', succeeded) ?? 0;
    expect(count(afterB) - count(beforeB)).toBe(1);
    expect(count(afterA) - count(beforeA)).toBe(0);
    expect((sample(afterB, 'ccos_agent_event_lag_seconds_count') ?? 0) - (sample(beforeB, 'ccos_agent_event_lag_seconds_count') ?? 0)).toBe(2);
    expect(sample(afterA, 'ccos_agent_event_lag_seconds_count')).toBe(sample(beforeA, 'ccos_agent_event_lag_seconds_count'));
    for (const step of ['PREFLIGHT', 'DOWNLOAD_BINARIES']) {
      expect(sample(afterA, 'ccos_installs_in_progress', { step }), step).toBe(sample(afterB, 'ccos_installs_in_progress', { step }));
    }
    expect(sample(afterA, 'ccos_nodes', { cluster: 'metrics', status: 'INSTALLING' })).toBe(1);
    expect(sample(afterB, 'ccos_nodes', { cluster: 'metrics', status: 'INSTALLING' })).toBe(1);
  });
});
