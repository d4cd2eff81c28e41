/**
 * The service at its busiest: N installs at once, each run by a simulated agent
 * (bench/support/simulated-agents.ts: the real agent's runner, client, spool, sender and download
 * step over the pinned HTTPS channel; a kubelet's TLS bootstrap in kube-sim with the run's own
 * bootstrap token). Only the SSH launch is replaced: the built API runs with AGENT_LAUNCHER_URL.
 *
 * N nodes stand READY_TO_INSTALL (as adding them over SSH leaves them); the cluster admits all N at
 * once (installsAtOnce = N); `installNode` is called for each through GraphQL; 100 `installProgress`
 * subscribers watch the first 100 nodes. Measured until every agent ended and every node joined:
 * events/s sustained, reportStep p50/p99 (as the agents saw them), the API's event-loop p99 per
 * one-second window (prom-client's histogram, reset at each scrape), event → subscriber p99,
 * CSR → certificate p99, API and Postgres CPU-seconds per install (cgroup and /proc accounting),
 * events lost or doubled (what each agent's spool numbered against what the service stored).
 *
 *   npx tsx bench/fleet.ts [installs=100]
 *
 * FLEET_API_NODE_OPTIONS: node options for the API process (e.g. `--require` of a measuring preload).
 *
 * Agents, kube-sim and subscribers run in this process: its CPU is not the service's. Build the API
 * first (`npx nx run api:build`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { writeStandInArtifactSet } from '@ccos/api/feature-artifacts/testing';
import { startKubeSim } from '@ccos/tools/kube-sim';
import { startApiWorld } from './support/api-world';
import { type CpuAccounting, cpuDelta, startCpuAccounting } from './support/cpu-accounting';
import { type BenchOptions, type Figure, isMain, percentile, printFigures } from './support/row';
import { SimulatedFleet } from './support/simulated-agents';

const SUBSCRIBERS = 100;
/** installNode calls in flight at once (an autoscaler's or a script's burst). */
const CALLS_AT_ONCE = 20;
const GOALS = { eventsPerSecond: 1_000, loopP99Ms: 100, windowsWithin: 0.95, reportP99Ms: 250, deliveryP99Ms: 500, cpuPerInstall: 0.05 } as const;

export interface FleetFigures {
  readonly installs: number;
  readonly joined: number;
  readonly seconds: number;
  readonly events: number;
  readonly eventsPerSecond: number;
  readonly reportP50: number;
  readonly reportP99: number;
  readonly eventsPerRequest: number;
  readonly loopP99Worst: number;
  readonly loopP99Median: number;
  readonly windowsWithinGoal: number;
  readonly deliveryP99: number;
  readonly deliveries: number;
  readonly csrP99: number;
  readonly apiCpuPerInstall: number;
  readonly postgresCpuPerInstall: number;
  readonly lost: number;
  readonly doubled: number;
  readonly installCallsMs: number;
}

export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const sizes = options.smoke ? [5] : [100, 500];
  const rows: Figure[] = [];
  for (const installs of sizes) {
    rows.push(...figuresOf(await measureFleet(installs, options.log)));
  }
  return rows;
}

function figuresOf(result: FleetFigures): Figure[] {
  const at = `${result.installs} simulated installs at once`;
  const goal = (name: string, value: number) => ({ name: `goal: ${name}`, value, measured: false });
  return [
    {
      name: `events/s sustained, ${at}`,
      value: result.eventsPerSecond,
      unit: 'events/s',
      reference: goal('≥ 1,000 events/s', GOALS.eventsPerSecond),
      better: 'higher',
      goal: { on: 'value', atLeast: GOALS.eventsPerSecond, text: '≥ 1,000 events/s at N = 500' },
      note: `${result.events} events in ${result.seconds.toFixed(1)} s, ${result.eventsPerRequest.toFixed(1)} a request; ${result.joined}/${result.installs} joined; lost ${result.lost}, doubled ${result.doubled}`,
    },
    { name: `reportStep p99, ${at}`, value: result.reportP99, unit: 'ms', reference: goal('≤ 250 ms', GOALS.reportP99Ms), better: 'lower', goal: { on: 'value', atMost: GOALS.reportP99Ms, text: 'p99 ≤ 250 ms' }, note: `p50 ${result.reportP50.toFixed(1)} ms` },
    {
      name: `API event-loop p99 per 1 s window, worst, ${at}`,
      value: result.loopP99Worst,
      unit: 'ms',
      reference: goal('≤ 100 ms in 95 % of windows', GOALS.loopP99Ms),
      better: 'lower',
      note: `median window ${result.loopP99Median.toFixed(1)} ms; ${(result.windowsWithinGoal * 100).toFixed(0)} % of windows ≤ 100 ms`,
    },
    { name: `event → installProgress subscriber p99, ${Math.min(SUBSCRIBERS, result.installs)} subscribers, ${at}`, value: result.deliveryP99, unit: 'ms', reference: goal('≤ 500 ms', GOALS.deliveryP99Ms), better: 'lower', goal: { on: 'value', atMost: GOALS.deliveryP99Ms, text: 'p99 ≤ 500 ms' }, note: `${result.deliveries} deliveries` },
    { name: `CSR → certificate p99, ${at}`, value: result.csrP99, unit: 'ms', reference: goal('≤ 2 s', 2_000), better: 'lower' },
    {
      name: `API + Postgres CPU-s per install, ${at}`,
      value: result.apiCpuPerInstall + result.postgresCpuPerInstall,
      unit: 'CPU-s',
      reference: goal('≤ 0.05 CPU-s on the event path', GOALS.cpuPerInstall),
      better: 'lower',
      note: `API ${result.apiCpuPerInstall.toFixed(3)}, Postgres ${result.postgresCpuPerInstall.toFixed(3)}; whole install (launch, tokens, identities, artifacts, CSR, inventory), not only events`,
    },
  ];
}

/** prom-client's event-loop p99 (seconds) in a /metrics text. */
function loopP99Ms(metrics: string): number | null {
  const match = /^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(metrics);
  return match ? Number(match[1]) * 1000 : null;
}

export async function measureFleet(installs: number, log: (line: string) => void): Promise<FleetFigures> {
  // The cluster has what the deployment ships for every managed cluster; the service is its account there.
  const sim = await startKubeSim({ seed: SHIPPED_RBAC, watchCacheSize: Math.max(1000, installs * 4) });
  const fleet = new SimulatedFleet({ server: sim.url, caPem: sim.caCertPem });
  const launcherUrl = await fleet.listen();
  const database: { name?: string } = {};
  const cpu: CpuAccounting = await startCpuAccounting(() => database.name);
  const artifactsDir = await writeStandInArtifactSet(await mkdtemp(join(tmpdir(), 'ccos-fleet-artifacts-')));
  const world = await startApiWorld({ AGENT_LAUNCHER_URL: launcherUrl, ARTIFACTS_DIR: artifactsDir, ...(process.env['FLEET_API_NODE_OPTIONS'] ? { NODE_OPTIONS: process.env['FLEET_API_NODE_OPTIONS'] } : {}) });
  database.name = new URL(world.databaseUrl).pathname.slice(1);
  const db = new pg.Client({ connectionString: world.databaseUrl });
  const subscribers: Client[] = [];
  let scraping = true;
  try {
    await db.connect();
    const { registerCluster } = await world.gql<{ registerCluster: { id: string } }>(
      'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }',
      { i: { name: `fleet-${installs}`, apiServerUrl: sim.url, vip: '198.18.0.1', kubeconfig: shippedIdentityKubeconfig(sim), csrAutoApprove: true } },
    );
    const clusterId = registerCluster.id;
    await world.gql('mutation($c: ID!, $n: Int!) { setClusterInstallsAtOnce(clusterId: $c, limit: $n) { id } }', { c: clusterId, n: installs });
    const nodeIds: string[] = [];
    for (let index = 0; index < installs; index++) {
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES (gen_random_uuid(), $1, $2, $3, 'READY_TO_INSTALL') RETURNING id`,
        [clusterId, `fleet-${String(index).padStart(4, '0')}`, `198.19.${Math.floor(index / 250)}.${(index % 250) + 2}`],
      );
      nodeIds.push(rows[0].id);
    }

    const latencies: number[] = [];
    const url = `${world.api.url.replace('http', 'ws')}/graphql`;
    await Promise.all(
      nodeIds.slice(0, SUBSCRIBERS).map(
        (nodeId) =>
          new Promise<void>((resolve, reject) => {
            const client = createClient({ url, webSocketImpl: WebSocket, lazy: false, connectionParams: { authorization: `Bearer ${world.token}` } });
            subscribers.push(client);
            let first = true;
            client.subscribe<{ installProgress: { events: Array<{ seq: number; occurredAt: string }> } }>(
              { query: 'subscription($n: ID!) { installProgress(nodeId: $n) { events { seq occurredAt } } }', variables: { n: nodeId } },
              {
                next: (message) => {
                  if (first) {
                    first = false;
                    resolve();
                    return;
                  }
                  const now = Date.now();
                  for (const event of message.data?.installProgress.events ?? []) {
                    latencies.push(now - Date.parse(event.occurredAt));
                  }
                },
                error: reject,
                complete: () => undefined,
              },
            );
          }),
      ),
    );

    const windows: number[] = [];
    const scraper = (async () => {
      while (scraping) {
        const text = await fetch(`${world.api.url}/metrics`).then((response) => response.text(), () => '');
        const p99 = loopP99Ms(text);
        if (p99 !== null) {
          windows.push(p99);
        }
        await sleep(1000);
      }
    })();
    await fetch(`${world.api.url}/metrics`); // starts the first window now

    const cpuBefore = await cpu.read();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CALLS_AT_ONCE }, async () => {
        while (next < nodeIds.length) {
          const nodeId = nodeIds[next++];
          await world.gql('mutation($n: ID!) { installNode(nodeId: $n) { id } }', { n: nodeId });
        }
      }),
    );
    const installCallsMs = performance.now() - started;
    log(`${installs} installNode calls answered in ${installCallsMs.toFixed(0)} ms`);
    await fleet.ended(installs, 30 * 60_000);
    let joined = 0;
    for (const deadline = Date.now() + 120_000; ; await sleep(250)) {
      joined = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM nodes WHERE cluster_id = $1 AND status = 'JOINED'`, [clusterId])).rows[0].n);
      if (joined === installs || Date.now() > deadline) {
        break;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = await cpu.read();
    scraping = false;
    await scraper;
    const spent = cpuDelta(cpuBefore, cpuAfter);

    let lost = 0;
    let doubled = 0;
    let events = 0;
    const stored = new Map<string, number[]>();
    for (const row of (await db.query<{ run_id: string; seqs: number[] }>(`SELECT e.run_id, array_agg(e.seq ORDER BY e.seq) AS seqs FROM step_events e JOIN install_runs r ON r.id = e.run_id JOIN nodes n ON n.id = r.node_id WHERE n.cluster_id = $1 GROUP BY e.run_id`, [clusterId])).rows) {
      stored.set(row.run_id, row.seqs);
    }
    for (const run of fleet.runs.values()) {
      const seqs = stored.get(run.runId) ?? [];
      events += seqs.length;
      const sent = new Set(run.sentSeqs);
      lost += [...sent].filter((seq) => !seqs.includes(seq)).length;
      doubled += seqs.length - new Set(seqs).size + seqs.filter((seq) => !sent.has(seq)).length;
    }
    const failed = [...fleet.runs.values()].filter((run) => run.error !== null || run.outcome?.kind !== 'succeeded');
    if (failed.length > 0) {
      log(`${failed.length} simulated agents did not succeed, e.g. ${JSON.stringify(failed.slice(0, 3).map((run) => ({ node: run.nodeName, outcome: run.outcome, error: run.error })))}`);
    }
    const report = [...fleet.figures.reportMs].sort((a, b) => a - b);
    const loop = [...windows].sort((a, b) => a - b);
    const csr = [...fleet.runs.values()].map((run) => run.csrApprovalMs).filter((ms): ms is number => ms !== null).sort((a, b) => a - b);
    const delivery = [...latencies].sort((a, b) => a - b);
    const result: FleetFigures = {
      installs,
      joined,
      seconds,
      events,
      eventsPerSecond: events / seconds,
      reportP50: percentile(report, 50),
      reportP99: percentile(report, 99),
      eventsPerRequest: fleet.figures.eventsPerRequest.reduce((sum, count) => sum + count, 0) / Math.max(1, fleet.figures.eventsPerRequest.length),
      loopP99Worst: loop.at(-1) ?? Number.NaN,
      loopP99Median: percentile(loop, 50),
      windowsWithinGoal: loop.filter((ms) => ms <= GOALS.loopP99Ms).length / Math.max(1, loop.length),
      deliveryP99: percentile(delivery, 99),
      deliveries: delivery.length,
      csrP99: percentile(csr, 99),
      apiCpuPerInstall: spent.api / installs,
      postgresCpuPerInstall: spent.postgres / installs,
      lost,
      doubled,
      installCallsMs,
    };
    if (joined !== installs || lost > 0 || doubled > 0 || failed.length > 0) {
      // A storm that loses an install or an event is a defect, not a figure.
      throw new Error(`${installs} simulated installs: ${joined} joined, ${failed.length} agents did not succeed, ${lost} events lost, ${doubled} doubled`);
    }
    log(`${installs} installs: ${joined} joined in ${seconds.toFixed(1)} s; ${events} events (${result.eventsPerSecond.toFixed(0)}/s, ${result.eventsPerRequest.toFixed(1)} a request); reportStep p50 ${result.reportP50.toFixed(1)} ms p99 ${result.reportP99.toFixed(1)} ms; loop p99 worst ${result.loopP99Worst.toFixed(1)} ms median ${result.loopP99Median.toFixed(1)} ms (${loop.length} windows); delivery p99 ${result.deliveryP99.toFixed(0)} ms; CSR p99 ${result.csrP99.toFixed(0)} ms; CPU-s API ${spent.api.toFixed(2)} Postgres ${spent.postgres.toFixed(2)} agents+kube-sim ${spent.bench.toFixed(2)}; lost ${lost} doubled ${doubled}`);
    return result;
  } finally {
    scraping = false;
    await Promise.allSettled(subscribers.map((client) => client.dispose()));
    await fleet.close();
    await db.end().catch(() => undefined);
    await world.stop();
    await cpu.stop();
    await sim.stop();
    await rm(artifactsDir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const installs = Number(process.argv[2] ?? 100);
  printFigures(figuresOf(await measureFleet(installs, (line) => console.error(line))));
}
