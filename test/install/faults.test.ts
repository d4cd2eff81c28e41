import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScaleOutWorld, approveUntilSettled, startScaleOutWorld } from '../support/scale-out-world';
import { overHttps } from '../support/service-https';

const RUN = `query($id: ID!) { node(id: $id) {
  status statusReason
  installRuns { id status startStep failedStep reason diagnostics { size url } steps { step status } events { seq step status message detail } }
} }`;

interface RunView {
  id: string;
  status: string;
  startStep: string;
  failedStep: string | null;
  reason: string | null;
  diagnostics: { size: number; url: string } | null;
  steps: Array<{ step: string; status: string }>;
  events: Array<{ seq: number; step: string; status: string; message: string | null; detail: Record<string, unknown> | null }>;
}

// The first test restarts the API, so it runs alone; the four after it each fault a host of
// their own (a cut link, swap, a stopped agent, a cancel) and run side by side, each approving
// only its own node's CSRs; the last reads the first two's runs.
describe('installs survive faults', () => {
  let world: ScaleOutWorld;
  const nodeIds: string[] = [];

  beforeAll(async () => {
    world = await startScaleOutWorld({ hosts: 5, apiEnv: { STALL_AFTER_SECONDS: '30' } });
    for (const index of [0, 1, 2, 3, 4]) {
      nodeIds.push(await world.addHost(index));
    }
    await Promise.all(nodeIds.map((id) => world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000)));
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  const runsOf = async (nodeId: string) =>
    (await world.gql<{ node: { status: string; statusReason: string; installRuns: RunView[] } }>(RUN, { id: nodeId })).data?.node;
  const install = async (nodeId: string, mutation = 'installNode') => {
    const result = await world.gql<Record<string, { id: string }>>(`mutation($id: ID!) { ${mutation}(nodeId: $id) { id } }`, { id: nodeId });
    expect(result.errors).toBeUndefined();
    return result.data?.[mutation]?.id ?? '';
  };
  const waitForEvent = async (nodeId: string, matches: (event: RunView['events'][number]) => boolean, timeoutMs: number) => {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      const run = (await runsOf(nodeId))?.installRuns.at(-1);
      if (run?.events.some(matches)) {
        return run;
      }
      await new Promise((wake) => setTimeout(wake, 200));
    }
    throw new Error(`no matching event for ${nodeId} within ${timeoutMs} ms`);
  };
  const storedEvents = async (runId: string) => {
    const db = new pg.Client({ connectionString: world.api.database?.url });
    await db.connect();
    const rows = (await db.query<{ seq: number }>('SELECT seq FROM step_events WHERE run_id = $1 ORDER BY seq', [runId])).rows;
    await db.end();
    return rows.map((row) => row.seq);
  };

  it('finishes an install while the API is killed and restarted, with no event lost or stored twice', async () => {
    const [nodeId] = nodeIds;
    await world.lab.faults.limitBandwidth('h1', '40mbit');
    const runId = await install(nodeId);
    await waitForEvent(nodeId, (event) => event.step === 'INSTALL_PACKAGES' && event.status === 'STARTED', 120_000);
    await world.api.kill(true);
    await new Promise((wake) => setTimeout(wake, 5000));
    await world.api.restart();
    await world.lab.faults.clearTrafficControl('h1');
    const { statuses } = await approveUntilSettled(world, [nodeId], ['JOINED', 'INSTALL_FAILED'], 240_000, { onlyTheirs: true });
    expect(statuses[nodeId]).toBe('JOINED');
    const seqs = await storedEvents(runId);
    expect(seqs.length).toBeGreaterThan(12);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
    const run = (await runsOf(nodeId))?.installRuns.at(-1);
    expect(run?.status).toBe('SUCCEEDED');
    expect(run?.steps.map((step) => step.status)).toEqual(Array(6).fill('SUCCEEDED'));
  }, 400_000);

  it.concurrent('resumes a download after the host\'s link is cut for 20 s during DOWNLOAD_BINARIES', async ({ expect }) => {
    const nodeId = nodeIds[1];
    await world.lab.faults.limitBandwidth('h2', '8mbit');
    await install(nodeId);
    await waitForEvent(nodeId, (event) => event.step === 'DOWNLOAD_BINARIES' && event.status === 'PROGRESS' && Number(event.detail?.['bytes'] ?? 0) > 0, 120_000);
    await world.lab.faults.cutLink('h2');
    await new Promise((wake) => setTimeout(wake, 20_000));
    await world.lab.faults.restoreLink('h2');
    await world.lab.faults.clearTrafficControl('h2');
    const { statuses } = await approveUntilSettled(world, [nodeId], ['JOINED', 'INSTALL_FAILED'], 240_000, { onlyTheirs: true });
    expect(statuses[nodeId]).toBe('JOINED');
    const run = (await runsOf(nodeId))?.installRuns.at(-1);
    const downloaded = run?.events.find((event) => event.step === 'DOWNLOAD_BINARIES' && event.status === 'SUCCEEDED');
    const files = (downloaded?.detail?.['files'] ?? []) as Array<{ name: string; resumedFrom: number }>;
    expect(files.some((file) => file.resumedFrom > 0)).toBe(true);
  }, 400_000);

  it.concurrent('fails at PREFLIGHT naming the check when swap is on, offers diagnostics, and a retry after the fix succeeds', async ({ expect }) => {
    const nodeId = nodeIds[2];
    await world.lab.faults.setSwap('h3', true);
    const firstRunId = await install(nodeId);
    const failed = await world.waitForStatus(nodeId, ['INSTALL_FAILED', 'JOINED'], 120_000);
    expect(failed.status).toBe('INSTALL_FAILED');
    expect(failed.statusReason).toMatch(/preflight/i);
    expect(failed.statusReason).toMatch(/swap/i);
    const firstRun = (await runsOf(nodeId))?.installRuns.at(-1);
    expect(firstRun).toMatchObject({ id: firstRunId, status: 'FAILED', failedStep: 'PREFLIGHT' });
    const check = firstRun?.events.find((event) => event.status === 'FAILED');
    expect(JSON.stringify(check?.detail)).toMatch(/swapoff/);

    // The agent uploads a diagnostics bundle after a failure; an operator can download it.
    const withDiagnostics = await (async () => {
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const run = (await runsOf(nodeId))?.installRuns.at(-1);
        if (run?.diagnostics) {
          return run;
        }
        await new Promise((wake) => setTimeout(wake, 200));
      }
      return null;
    })();
    expect(withDiagnostics?.diagnostics?.size).toBeGreaterThan(100);
    const download = await fetch(`${world.api.url}${withDiagnostics?.diagnostics?.url}`, { headers: { authorization: `Bearer ${world.token}` } });
    expect(download.status).toBe(200);
    const bundle = Buffer.from(await download.arrayBuffer());
    expect([bundle[0], bundle[1]]).toEqual([0x1f, 0x8b]);
    expect((await fetch(`${world.api.url}${withDiagnostics?.diagnostics?.url}`)).status).toBe(401);

    await world.lab.faults.setSwap('h3', false);
    await install(nodeId, 'retryInstall');
    const { statuses } = await approveUntilSettled(world, [nodeId], ['JOINED', 'INSTALL_FAILED'], 240_000, { onlyTheirs: true });
    expect(statuses[nodeId]).toBe('JOINED');
    const runs = (await runsOf(nodeId))?.installRuns ?? [];
    expect(runs.map((run) => run.status)).toEqual(['FAILED', 'SUCCEEDED']);
    expect(runs[1].startStep).toBe('PREFLIGHT');
  }, 400_000);

  it.concurrent('marks an install STALLED when its agent goes silent, and INSTALLING again when it speaks', async ({ expect }) => {
    const nodeId = nodeIds[3];
    const runId = await install(nodeId);
    // Without CSR approval the agent waits in START_KUBELET, sending heartbeats. Stopped once it waits (not while it
    // reads kubelet's unit at the step's start: a command under way when the agent is stopped outlives its timeout).
    await waitForEvent(nodeId, (event) => event.step === 'START_KUBELET' && event.status === 'PROGRESS' && typeof (event.detail as { waitedSeconds?: unknown } | null)?.waitedSeconds === 'number', 120_000);
    const pid = (await world.lab.exec('h4', ['cat', `/opt/ccos-scaler/runs/${runId}/agent.pid`])).stdout.trim();
    await world.lab.exec('h4', ['kill', '-STOP', pid]);
    try {
      const stalled = await world.waitForStatus(nodeId, ['STALLED'], 90_000);
      expect(stalled.statusReason).toMatch(/^the agent has not reported for \d+ s/);
    } finally {
      await world.lab.exec('h4', ['kill', '-CONT', pid]);
    }
    await world.waitForStatus(nodeId, ['INSTALLING'], 60_000);
    const { statuses } = await approveUntilSettled(world, [nodeId], ['JOINED', 'INSTALL_FAILED'], 240_000, { onlyTheirs: true });
    expect(statuses[nodeId]).toBe('JOINED');
  }, 400_000);

  it.concurrent('cancels a running install, stopping the agent, and a retry resumes where it stopped', async ({ expect }) => {
    const nodeId = nodeIds[4];
    await world.lab.faults.limitBandwidth('h5', '20mbit');
    const runId = await install(nodeId);
    await waitForEvent(nodeId, (event) => event.step === 'INSTALL_PACKAGES' && event.status === 'PROGRESS', 120_000);
    const cancelled = await world.gql<{ cancelInstall: { status: string; reason: string } }>('mutation($id: ID!) { cancelInstall(nodeId: $id) { status reason } }', { id: nodeId });
    expect(cancelled.data?.cancelInstall).toEqual({ status: 'CANCELLED', reason: 'cancelled by admin' });
    const node = await runsOf(nodeId);
    expect(node?.status).toBe('INSTALL_FAILED');
    expect(node?.statusReason).toBe('install cancelled by admin');
    // The agent is stopped by a worker's job moments later: no process runs with this run's config.
    await expect.poll(async () => (await world.lab.exec('h5', ['pgrep', '-f', runId], { allowFailure: true })).code).toBe(1);

    await world.lab.faults.clearTrafficControl('h5');
    await install(nodeId, 'retryInstall');
    const { statuses } = await approveUntilSettled(world, [nodeId], ['JOINED', 'INSTALL_FAILED'], 240_000, { onlyTheirs: true });
    expect(statuses[nodeId]).toBe('JOINED');
    const runs = (await runsOf(nodeId))?.installRuns ?? [];
    expect(runs.map((run) => run.status)).toEqual(['CANCELLED', 'SUCCEEDED']);
    expect(runs[1].startStep).toBe('INSTALL_PACKAGES');
  }, 400_000);

  it('lets an agent token report for its own run only, over TLS only, and not after the run has ended', async () => {
    const [first, second] = await Promise.all(nodeIds.slice(0, 2).map(async (id) => (await runsOf(id))?.installRuns.at(-1)?.id ?? ''));
    const config = await world.lab.exec('h1', ['cat', `/opt/ccos-scaler/runs/${first}/config.json`]);
    const { token, apiUrl, serviceTls } = JSON.parse(config.stdout) as { token: string; apiUrl: string; serviceTls: { caCertificates: string } };
    expect(token).toMatch(/^agt_/);
    expect(apiUrl).toBe(`https://${world.lab.gateway}:${world.api.port}`);
    const ca = serviceTls.caCertificates;
    const reportBody = (runId: string, seq: number) => JSON.stringify({
      query: 'mutation($input: ReportStepInput!) { reportStep(input: $input) { accepted duplicate } }',
      variables: { input: { runId, seq, step: 'PREFLIGHT', status: 'STARTED', occurredAt: new Date().toISOString() } },
    });
    const report = async (runId: string, seq: number) =>
      (await overHttps(`${apiUrl}/graphql`, { ca, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: reportBody(runId, seq) }))
        .json<{ errors?: Array<{ message: string; extensions: { code: string } }> }>();
    const forOther = await report(second, 999);
    expect(forOther.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect(await storedEvents(second)).not.toContain(999);
    // The same token on plain HTTP is refused whatever it asks.
    const plain = await fetch(`${world.api.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: reportBody(first, 998) });
    expect(plain.status).toBe(403);
    expect(((await plain.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions.code).toBe('HTTPS_REQUIRED');
    expect(await storedEvents(first)).not.toContain(998);
    // Its own run is over: a re-sent event is a harmless duplicate, and the node's status does not move.
    const resent = await report(first, 1);
    expect(resent).toMatchObject({ data: { reportStep: { accepted: true, duplicate: true } } });
    const forged = await overHttps(`${apiUrl}/graphql`, {
      ca,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer agt_forged' },
      body: JSON.stringify({ query: '{ agentRun { runId } }' }),
    });
    expect(forged.json<{ errors?: Array<{ extensions: { code: string } }> }>().errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    expect((await overHttps(`${apiUrl}/artifacts/manifest`, { ca, headers: { authorization: 'Bearer agt_forged' } })).status).toBe(401);
  });
});
