import { createHmac } from 'node:crypto';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/api-process';
import { subscribe } from '../support/graphql-subscriptions';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

const HOSTS = 12;
const BATCH_FIELDS = `id state concurrency
  progress { total added queued installing installingBySteps { step hosts } waitingForSlot joined failed failures { hostname reason } cancelled waitingForOperator }
  hosts { position hostname ip phase status statusReason step }`;
const BATCH_PROGRESS = `subscription($id: ID!) { batchProgress(batchId: $id) { ${BATCH_FIELDS} } }`;

interface BatchView {
  id: string;
  state: string;
  concurrency: number;
  progress: {
    total: number; added: number; queued: number; installing: number; installingBySteps: Array<{ step: string; hosts: number }>; waitingForSlot: number;
    joined: number; failed: number; failures: Array<{ hostname: string; reason: string }>; cancelled: number; waitingForOperator: number;
  };
  hosts: Array<{ position: number; hostname: string; ip: string; phase: string; status: string; statusReason: string | null; step: string | null }>;
}

/** A webhook receiver on loopback: what it was sent, in the order it got it; `up` starts it listening, `down` stops it. */
class Receiver {
  readonly received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  private server: Server | null = null;

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/ccos-events`;
  }

  async up(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        this.received.push({ headers: request.headers, body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((listening) => this.server?.listen(this.port, '127.0.0.1', listening));
  }

  async down(): Promise<void> {
    await new Promise((closed) => this.server?.close(closed));
    this.server = null;
  }
}

/** The receiver's own check of a delivery, from the documented format: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
function signedBy(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(headers['x-signature'] ?? ''));
  return match !== null && createHmac('sha256', secret).update(`${match[1]}.${body}`).digest('hex') === match[2];
}

describe('batch install: 12 lab hosts from one range with one shared password', () => {
  let world: ScaleOutWorld;

  beforeAll(async () => {
    world = await startScaleOutWorld({
      hosts: HOSTS,
      name: 'batch-install',
      hostnamePrefix: 'w-',
      csrAutoApprove: true,
      apiEnv: { SSH_CONNECT_TIMEOUT_MS: '6000', BATCH_CONCURRENCY: '10' },
    });
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('joins 10, reports the unreachable host and the failing preflight with reasons, and retries both after the faults are lifted, through an API restart; a webhook receiver down for the first 60 s gets every transition in order, signed', async () => {
    const { hosts } = world.lab;
    // The cluster's webhook receiver is down (nothing listens on its port) for the first 60 s.
    const receiver = new Receiver(await freePort());
    const endpoint = await world.gql<{ createWebhookEndpoint: { endpoint: { id: string }; secret: string } }>(
      'mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } secret } }',
      { input: { clusterId: world.clusterId, url: receiver.url, description: 'batch-install e2e' } },
    );
    expect(endpoint.errors).toBeUndefined();
    const secret = endpoint.data?.createWebhookEndpoint.secret ?? '';
    const receiverUp = setTimeout(() => void receiver.up(), 60_000);
    const unreachable = hosts[4];
    const swapped = hosts[8];
    await world.lab.faults.cutLink(unreachable.id);
    await world.lab.faults.setSwap(swapped.id, true);

    const started = Date.now();
    const added = await world.gql<{ addNodes: { added: number; refused: number; batch: BatchView | null; rows: Array<{ hostname: string; ip: string; problems: unknown[] }> } }>(
      `mutation($input: AddNodesInput!) { addNodes(input: $input) { added refused rows { hostname ip problems { field message } } batch { ${BATCH_FIELDS} } } }`,
      { input: { clusterId: world.clusterId, range: { range: `${hosts[0].ip}-${hosts[HOSTS - 1].ip}`, hostnamePattern: 'w-{n}' }, sshUser: 'root', password: hosts[0].password } },
    );
    expect(added.errors).toBeUndefined();
    expect(added.data?.addNodes.added).toBe(HOSTS);
    expect(added.data?.addNodes.rows.map((row) => `${row.hostname}@${row.ip}`)).toEqual(hosts.map((host) => `${host.hostname}@${host.ip}`));
    const batchId = added.data?.addNodes.batch?.id ?? '';

    const live = subscribe<{ batchProgress: BatchView }>(world.api.url, world.token, BATCH_PROGRESS, { id: batchId });
    // On a timeout, say where the batch stood and what the API logged last.
    const stream = {
      until: (done: (messages: ReadonlyArray<{ batchProgress: BatchView }>) => boolean, timeoutMs: number) =>
        live.until(done, timeoutMs).catch((error: unknown) => {
          const last = live.messages.at(-1)?.batchProgress;
          throw new Error(`${String(error)}\nlast: ${JSON.stringify({ state: last?.state, progress: last?.progress, hosts: last?.hosts.map((host) => [host.hostname, host.phase, host.status, host.step, host.statusReason]) })}\n${world.api.output().slice(-4000)}`);
        }),
      close: () => live.close(),
    };
    await stream.until((messages) => messages.length > 0, 20_000);
    // The cluster runs at most 6 installs at once: of the batch's 10 at a time, the rest wait their turn in line.
    const limited = await world.gql<{ setClusterInstallsAtOnce: { installsAtOnce: number } }>('mutation($id: ID!) { setClusterInstallsAtOnce(clusterId: $id, limit: 6) { installsAtOnce } }', { id: world.clusterId });
    expect(limited.data?.setClusterInstallsAtOnce.installsAtOnce).toBe(6);
    const db = new pg.Client({ connectionString: world.api.database?.url });
    await db.connect();
    const line = { mostRunning: 0, mostWaiting: 0 };
    const lineWatch = setInterval(() => {
      void db
        .query<{ running: number; waiting: number }>("SELECT count(admitted_at)::int AS running, (count(*) - count(admitted_at))::int AS waiting FROM install_runs WHERE status = 'RUNNING'")
        .then(({ rows: [counts] }) => {
          line.mostRunning = Math.max(line.mostRunning, counts.running);
          line.mostWaiting = Math.max(line.mostWaiting, counts.waiting);
        })
        .catch(() => undefined);
    }, 100);
    const install = await world.gql<{ installBatch: BatchView }>(`mutation($id: ID!) { installBatch(batchId: $id) { ${BATCH_FIELDS} } }`, { id: batchId });
    expect(install.errors).toBeUndefined();
    expect(install.data?.installBatch.concurrency).toBe(10);

    const settled = await stream.until((messages) => {
      const progress = messages.at(-1)?.batchProgress.progress;
      return (progress?.joined ?? 0) + (progress?.failed ?? 0) === HOSTS;
    }, 170_000);
    const firstPass = Date.now() - started;
    clearInterval(lineWatch);
    expect(line.mostRunning).toBeGreaterThan(1);
    expect(line.mostRunning).toBeLessThanOrEqual(6);
    expect(line.mostWaiting).toBeGreaterThan(0);
    const last = settled.at(-1)?.batchProgress as BatchView;
    expect(last.state).toBe('NEEDS_ATTENTION');
    expect(last.progress.joined).toBe(10);
    expect(last.progress.failed).toBe(2);
    const failures = Object.fromEntries(last.progress.failures.map((failure) => [failure.hostname, failure.reason]));
    expect(Object.keys(failures).sort()).toEqual([unreachable.hostname, swapped.hostname].sort());
    expect(failures[unreachable.hostname]).toMatch(/cannot reach ssh .*no answer/i);
    expect(failures[swapped.hostname]).toMatch(/swap/i);
    expect(last.hosts.find((host) => host.hostname === unreachable.hostname)?.status).toBe('UNREACHABLE');
    expect(last.hosts.find((host) => host.hostname === swapped.hostname)?.status).toBe('INSTALL_FAILED');

    // The live view showed hosts installing at once, by step, and never more than the concurrency.
    const views = settled.map((message) => message.batchProgress);
    expect(Math.max(...views.map((view) => view.progress.installing))).toBeGreaterThan(1);
    expect(Math.max(...views.map((view) => view.progress.installing))).toBeLessThanOrEqual(10);
    expect(views.some((view) => view.progress.installingBySteps.length > 0)).toBe(true);
    // Those beyond the cluster's 6 were counted as waiting for a slot while they waited, and none is at the end.
    expect(Math.max(...views.map((view) => view.progress.waitingForSlot))).toBeGreaterThan(0);
    expect(last.progress.waitingForSlot).toBe(0);

    // Lift the faults, retry the failed: both join.
    await world.lab.faults.restoreLink(unreachable.id);
    await world.lab.faults.setSwap(swapped.id, false);
    const retry = await world.gql<{ retryFailed: BatchView }>(`mutation($id: ID!) { retryFailed(batchId: $id) { ${BATCH_FIELDS} } }`, { id: batchId });
    expect(retry.errors).toBeUndefined();
    const retryStarted = Date.now();
    // While the retries run, the API is killed and started again: the batch goes on from Postgres. Not while an
    // agent is in PREFLIGHT: its checks wait for the API (a minute at most), which would only slow the batch.
    await stream.until((messages) => {
      const steps = messages.at(-1)?.batchProgress.progress.installingBySteps ?? [];
      return steps.length > 0 && steps.every((entry) => entry.step !== 'PREFLIGHT');
    }, 120_000);
    await world.api.kill(true);
    await world.api.restart();
    const finished = await stream.until((messages) => messages.at(-1)?.batchProgress.state === 'FINISHED', 240_000);
    const retryTime = Date.now() - retryStarted;
    expect(finished.at(-1)?.batchProgress.progress).toMatchObject({ total: HOSTS, joined: HOSTS, failed: 0, installing: 0, queued: 0 });
    await stream.close();

    // The cluster agrees: twelve Ready Nodes named after the pattern.
    const nodes = world.sim.store.list(world.sim.resource('nodes')) as unknown as Array<{ metadata: { name: string }; status?: { conditions?: Array<{ type: string; status: string }> } }>;
    const ready = nodes.filter((node) => node.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True')).map((node) => node.metadata.name);
    expect(ready.sort()).toEqual(hosts.map((host) => host.hostname).sort());

    // Audited, and the shared password appears in no audit entry (the API process's stop checks logs and responses too).
    const audit = (await db.query<{ action: string; result: string; detail: string }>("SELECT action, result, detail::text AS detail FROM audit_log WHERE action IN ('addNodes', 'installBatch', 'retryFailed') ORDER BY id")).rows;
    await db.end();
    expect(audit.map((entry) => `${entry.action}:${entry.result}`)).toEqual(['addNodes:SUCCESS', 'installBatch:SUCCESS', 'retryFailed:SUCCESS']);
    expect(audit.some((entry) => entry.detail.includes(hosts[0].password))).toBe(false);

    console.log(`batch of ${HOSTS}: 10 joined + 2 failed in ${(firstPass / 1000).toFixed(1)} s; retry of the 2 (API killed and restarted meanwhile) in ${(retryTime / 1000).toFixed(1)} s`);

    // Every change of every host's status reached the receiver, in the order it was recorded, each signed with the endpoint's secret.
    const db2 = new pg.Client({ connectionString: world.api.database?.url });
    await db2.connect();
    const recorded = (await db2.query<{ event_id: string; hostname: string; new_status: string }>('SELECT event_id, hostname, new_status FROM node_transitions WHERE cluster_id = $1 ORDER BY seq', [world.clusterId])).rows;
    await db2.end();
    expect(recorded.filter((row) => row.new_status === 'JOINED')).toHaveLength(HOSTS);
    const receivedIds = () => [...new Set(receiver.received.map((entry) => String(entry.headers['x-event-id'])))];
    await expect.poll(receivedIds, { timeout: 120_000, interval: 500 }).toEqual(recorded.map((row) => row.event_id));
    clearTimeout(receiverUp);
    await receiver.down();
    const events = receiver.received.map((entry) => JSON.parse(entry.body) as { id: string; type: string; node: { hostname: string }; new_state: string });
    // Resent only when a delivery's answer was lost (the API was killed meanwhile): then right after itself.
    expect(events.filter((event, index) => index > 0 && events[index - 1]?.id === event.id).length).toBe(events.length - recorded.length);
    expect(receiver.received.every((entry) => signedBy(secret, entry.headers, entry.body))).toBe(true);
    // A body changed on the way fails the check.
    const joinedDeliveries = receiver.received.filter((entry) => entry.body.includes('"new_state":"JOINED"'));
    expect(joinedDeliveries.length).toBeGreaterThanOrEqual(HOSTS);
    expect(joinedDeliveries.some((entry) => signedBy(secret, entry.headers, entry.body.replace('"new_state":"JOINED"', '"new_state":"REMOVED"')))).toBe(false);
    expect(events.filter((event) => event.type === 'install.joined').map((event) => event.node.hostname).sort()).toEqual(hosts.map((host) => host.hostname).sort());
    expect(events.filter((event) => event.type === 'install.failed').map((event) => event.node.hostname)).toEqual([swapped.hostname]);
    const attempts = await world.gql<{ webhookDeliveries: Array<{ ok: boolean; error: string | null }> }>('query($id: ID!) { webhookDeliveries(endpointId: $id, first: 500) { ok error } }', { id: endpoint.data?.createWebhookEndpoint.endpoint.id });
    expect(attempts.data?.webhookDeliveries.some((attempt) => !attempt.ok && /ECONNREFUSED/.test(attempt.error ?? ''))).toBe(true);
  }, 600_000);
});
