import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe } from '../support/graphql-subscriptions';
import { sampleValue, samplesOf, scrape } from '../support/metrics-text';
import { type ScaleOutWorld, approveUntilSettled, startScaleOutWorld } from '../support/scale-out-world';

const INSTALL_PROGRESS = `subscription($nodeId: ID!) {
  installProgress(nodeId: $nodeId) {
    nodeId
    run { id status steps { step status progress } }
    events { seq step status message }
  }
}`;
const STEPS = ['PREFLIGHT', 'DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET'];

interface ProgressMessage {
  installProgress: {
    nodeId: string;
    run: { id: string; status: string; steps: Array<{ step: string; status: string }> } | null;
    events: Array<{ seq: number; step: string; status: string; message: string | null }>;
  };
}

describe('scale-out: three hosts installed at once', () => {
  let world: ScaleOutWorld;

  beforeAll(async () => {
    world = await startScaleOutWorld({ hosts: 3 });
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('adds three lab hosts, installs them at once, approves their CSRs through the API, and each Node is Ready', async () => {
    const ids = await Promise.all([0, 1, 2].map((index) => world.addHost(index, { labels: [{ key: 'node-role.kubernetes.io/worker', value: '' }] })));
    await Promise.all(ids.map((id) => world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000)));

    const streams = ids.map((nodeId) => subscribe<ProgressMessage>(world.api.url, world.token, INSTALL_PROGRESS, { nodeId }));
    await Promise.all(streams.map((stream) => stream.until((messages) => messages.length > 0, 10_000)));

    const started = await Promise.all(ids.map((nodeId) => world.gql<{ installNode: { id: string; status: string } }>('mutation($id: ID!) { installNode(nodeId: $id) { id status } }', { id: nodeId })));
    expect(started.map((result) => result.errors)).toEqual([undefined, undefined, undefined]);
    expect(started.map((result) => result.data?.installNode.status)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);

    const { statuses, approved } = await approveUntilSettled(world, ids, ['JOINED', 'INSTALL_FAILED', 'STALLED'], 240_000);
    expect(Object.values(statuses)).toEqual(['JOINED', 'JOINED', 'JOINED']);
    // Each node asks for a client certificate, then a serving certificate.
    expect(approved.length).toBeGreaterThanOrEqual(6);
    for (const id of ids) {
      expect((await world.waitForStatus(id, ['JOINED', 'INSTALL_FAILED'], 10_000)).status).toBe('JOINED');
    }

    // The cluster agrees: three Ready Nodes with the labels we asked for.
    const nodes = world.sim.store.list(world.sim.resource('nodes'));
    for (const hostname of ['h1', 'h2', 'h3']) {
      const node = nodes.find((candidate) => candidate.metadata.name === hostname) as unknown as
        | { metadata: { labels?: Record<string, string> }; status?: { conditions?: Array<{ type: string; status: string }> } }
        | undefined;
      expect(node?.status?.conditions?.find((condition) => condition.type === 'Ready')?.status).toBe('True');
      expect(node?.metadata.labels?.['node-role.kubernetes.io/worker']).toBe('');
    }

    // Each subscriber saw the six steps start and succeed, in order, with no gap or repeat.
    let storedEvents = 0;
    for (const stream of streams) {
      const messages = await stream.until((all) => all.at(-1)?.installProgress.run?.status === 'SUCCEEDED', 30_000);
      const events = messages.flatMap((message) => message.installProgress.events);
      const seqs = events.map((event) => event.seq);
      expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
      const milestones = events.filter((event) => event.status !== 'PROGRESS').map((event) => `${event.step}:${event.status}`);
      expect(milestones).toEqual(STEPS.flatMap((step) => [`${step}:STARTED`, `${step}:SUCCEEDED`]));
      expect(messages.at(-1)?.installProgress.run?.steps.map((step) => step.status)).toEqual(Array(6).fill('SUCCEEDED'));
      storedEvents += events.length;
      await stream.close();
    }

    // /metrics counts the same: each step timed once per host, the runs, every stored event, the operator's approvals.
    const text = await scrape(world.api.url);
    for (const step of STEPS) {
      expect(sampleValue(text, 'ccos_install_step_duration_seconds_count', { step, outcome: 'SUCCEEDED' }), step).toBe(3);
      expect(sampleValue(text, 'ccos_install_step_duration_seconds_bucket', { step, outcome: 'SUCCEEDED', le: '+Inf' }), step).toBe(3);
      expect(sampleValue(text, 'ccos_install_step_duration_seconds_sum', { step, outcome: 'SUCCEEDED' }), step).toBeGreaterThan(0);
      expect(sampleValue(text, 'ccos_install_step_duration_seconds_count', { step, outcome: 'FAILED' }), step).toBeUndefined();
      expect(sampleValue(text, 'ccos_installs_in_progress', { step }), step).toBe(0);
    }
    expect(sampleValue(text, 'ccos_install_runs_finished_total', { outcome: 'SUCCEEDED', failure_code: 'none' })).toBe(3);
    expect(samplesOf(text).filter((sample) => sample.name === 'ccos_install_runs_finished_total').map((sample) => sample.labels['outcome'])).toEqual(['SUCCEEDED']);
    expect(sampleValue(text, 'ccos_agent_event_lag_seconds_count')).toBe(storedEvents);
    expect(sampleValue(text, 'ccos_csr_decisions_total', { cluster: 'lab', verdict: 'APPROVED', decider: 'operator' })).toBe(approved.length);
    expect(samplesOf(text).filter((sample) => sample.name === 'ccos_csr_decisions_total')).toHaveLength(1);
    expect(sampleValue(text, 'ccos_csrs_pending', { cluster: 'lab' })).toBe(0);
    expect(sampleValue(text, 'ccos_nodes', { cluster: 'lab', status: 'JOINED' })).toBe(3);
  }, 400_000);
});

describe('scale-out with CSR auto-approve on', () => {
  let world: ScaleOutWorld;

  beforeAll(async () => {
    world = await startScaleOutWorld({ hosts: 3, csrAutoApprove: true });
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('installs three hosts with no manual approval; every CSR is approved by the auto-approver with its checks recorded', async () => {
    const ids = await Promise.all([0, 1, 2].map((index) => world.addHost(index)));
    await Promise.all(ids.map((id) => world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000)));
    for (const id of ids) {
      const started = await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id });
      expect(started.errors).toBeUndefined();
    }
    const joined = await Promise.all(ids.map((id) => world.waitForStatus(id, ['JOINED', 'INSTALL_FAILED', 'STALLED'], 240_000)));
    expect(joined.map((node) => node.status)).toEqual(['JOINED', 'JOINED', 'JOINED']);

    const csrs = await world.gql<{ csrs: Array<{ name: string; status: string; decidedBy: string | null; node: { hostname: string } | null }> }>(
      'query($c: ID!) { csrs(clusterId: $c, pendingOnly: false) { name status decidedBy node { hostname } } }',
      { c: world.clusterId },
    );
    const approved = (csrs.data?.csrs ?? []).filter((csr) => csr.status !== 'PENDING');
    expect(approved.length).toBeGreaterThanOrEqual(6);
    expect(new Set(approved.map((csr) => csr.decidedBy))).toEqual(new Set(['auto-approver']));
    expect(new Set(approved.map((csr) => csr.node?.hostname))).toEqual(new Set(['h1', 'h2', 'h3']));

    // /metrics: the auto-approver's decisions by verdict, none by an operator, this replica holding the Lease, the steps timed.
    const text = await scrape(world.api.url);
    const byVerdict = (status: string) => approved.filter((csr) => csr.status === status).length;
    expect(sampleValue(text, 'ccos_csr_decisions_total', { cluster: 'lab', verdict: 'APPROVED', decider: 'auto-approver' })).toBe(byVerdict('APPROVED'));
    expect(sampleValue(text, 'ccos_csr_decisions_total', { cluster: 'lab', verdict: 'DENIED', decider: 'auto-approver' }) ?? 0).toBe(byVerdict('DENIED'));
    expect(samplesOf(text).filter((sample) => sample.name === 'ccos_csr_decisions_total' && sample.labels['decider'] !== 'auto-approver')).toEqual([]);
    expect(sampleValue(text, 'ccos_csr_approver_leader', { cluster: 'lab' })).toBe(1);
    for (const step of STEPS) {
      expect(sampleValue(text, 'ccos_install_step_duration_seconds_count', { step, outcome: 'SUCCEEDED' }), step).toBe(3);
    }
  }, 400_000);
});
