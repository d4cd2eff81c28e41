/**
 * The agent event path, end to end through the built API on Postgres:
 *
 * - ingestion: 20 agents (each its install run and real agent token) post `reportStep` as fast
 *   as the API answers, one request at a time each, for a fixed time; then the same with
 *   `reportSteps`, 10 events a request (what an agent's spool sends once events pile up behind
 *   a busy service); beside the ceiling, 20 plain `pg` clients inserting the same rows into the
 *   same table (step_events) for the same time, one INSERT at a time each;
 * - delivery: 100 `installProgress` subscribers over graphql-ws on one node; an agent posts
 *   events one by one, and each subscriber's arrival time is taken against the post's start
 *   (one clock: both ends are in this process). Beside the peer design that polls every 10 s,
 *   whose expected latency is 5 s (half the period), computed, not measured.
 *
 *   npx tsx bench/agent-ingestion.ts [seconds=10] [subscribers=100] [events=50]
 *
 * Agents speak plain HTTP here (AGENT_PLAIN_HTTP=allow); bench/agent-channel-tls.ts measures
 * what TLS adds. Build the API first (`npx nx run api:build`).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createClient, type Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { newOpaqueToken } from '@ccos/api/util-secrets';
import { type ApiWorld, startApiWorld } from './support/api-world';
import { type BenchOptions, type Figure, isMain, percentile } from './support/row';

const REPORT = 'mutation($input: ReportStepInput!) { reportStep(input: $input) { accepted duplicate } }';
const REPORT_BATCH = 'mutation($inputs: [ReportStepInput!]!) { reportSteps(inputs: $inputs) { accepted duplicateSeqs } }';
const AGENTS = 20;
/**
 * Events an agent reports for one run before it takes its next: a run stores at most 2,000
 * (`DEFAULT_RUN_EVENT_CAPS`), and a quiet machine passes that within the row's 10 s.
 */
const EVENTS_PER_RUN = 1_000;
const RUNS_PER_AGENT = 10;
const BATCH = 10;
const POLL_SECONDS = 10;

export interface IngestionSize {
  readonly seconds: number;
  readonly subscribers: number;
  readonly events: number;
}

export interface IngestionFigures {
  readonly apiPerSecond: number;
  readonly batchPerSecond: number;
  readonly rawPerSecond: number;
  readonly deliveryP50: number;
  readonly deliveryP99: number;
  readonly deliveries: number;
}

/** The row of `npm run bench`. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const size = options.smoke ? { seconds: 1, subscribers: 5, events: 3 } : { seconds: 10, subscribers: 100, events: 50 };
  const result = await measureIngestion(size, options.log);
  const poll = { name: `${POLL_SECONDS} s polling design, mean (period/2)`, value: (POLL_SECONDS * 1000) / 2, measured: false };
  return [
    {
      name: `reportStep events/s, ${AGENTS} agents, one event a request`,
      value: result.apiPerSecond,
      unit: 'events/s',
      reference: { name: `plain pg INSERT into step_events, ${AGENTS} clients`, value: result.rawPerSecond, measured: true },
      better: 'higher',
    },
    {
      name: `reportSteps events/s, ${AGENTS} agents, ${BATCH} events a request`,
      value: result.batchPerSecond,
      unit: 'events/s',
      reference: { name: `plain pg INSERT into step_events, ${AGENTS} clients`, value: result.rawPerSecond, measured: true },
      better: 'higher',
      goal: { on: 'ratio', atLeast: 0.5, text: '≥ 0.5 × raw insert' },
    },
    {
      name: `post → installProgress delivery p50, ${size.subscribers} subscribers`,
      value: result.deliveryP50,
      unit: 'ms',
      reference: poll,
      better: 'lower',
    },
    {
      name: `post → installProgress delivery p99, ${size.subscribers} subscribers`,
      value: result.deliveryP99,
      unit: 'ms',
      reference: poll,
      better: 'lower',
      goal: { on: 'value', atMost: 100, text: 'p99 ≤ 100 ms' },
    },
  ];
}

/** Nodes and RUNNING install runs with agent tokens, written as installNode writes them. */
async function seedRuns(db: pg.Client, count: number, label: string): Promise<Array<{ nodeId: string; runId: string; token: string }>> {
  const clusterId = randomUUID();
  await db.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, $2, 'https://198.18.0.1:6443', '198.18.0.1', 'x', 'TOKEN')`, [clusterId, label]);
  const runs: Array<{ nodeId: string; runId: string; token: string }> = [];
  for (let index = 0; index < count; index++) {
    const nodeId = randomUUID();
    const runId = randomUUID();
    const { token, hash } = newOpaqueToken('agt');
    await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'INSTALLING')`, [nodeId, clusterId, `${label}-${index}`, `198.18.0.${index + 10}`]);
    await db.query(
      `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, deadline_at, agent_token_expires_at, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '2 hours', now() + interval '2 hours', now())`,
      [runId, nodeId, hash],
    );
    runs.push({ nodeId, runId, token });
  }
  return runs;
}

const stepEvent = (runId: string, seq: number) => ({ runId, seq, step: 'PREFLIGHT', status: 'PROGRESS', progress: seq % 100, message: `checked ${seq}`, occurredAt: new Date().toISOString() });

async function report(world: ApiWorld, token: string, input: ReturnType<typeof stepEvent>): Promise<void> {
  const answer = await world.gql<{ reportStep: { accepted: boolean } }>(REPORT, { input }, token);
  if (!answer.reportStep.accepted) {
    throw new Error(`event ${input.seq} of ${input.runId} was not accepted`);
  }
}

async function reportBatch(world: ApiWorld, token: string, inputs: Array<ReturnType<typeof stepEvent>>): Promise<void> {
  const answer = await world.gql<{ reportSteps: { accepted: number; duplicateSeqs: number[] } }>(REPORT_BATCH, { inputs }, token);
  if (answer.reportSteps.accepted !== inputs.length || answer.reportSteps.duplicateSeqs.length > 0) {
    throw new Error(`a batch of ${inputs.length} events of ${inputs[0]?.runId} was not stored whole`);
  }
}

/** The run and seq of an agent's `event`th event (from 1): each agent moves to its next run every {@link EVENTS_PER_RUN} events. */
function runOfEvent<R>(runs: readonly R[], agent: number, event: number): { run: R; seq: number } {
  const run = runs[agent * RUNS_PER_AGENT + Math.floor((event - 1) / EVENTS_PER_RUN)];
  if (run === undefined) {
    throw new Error(`agent ${agent} reported more than ${RUNS_PER_AGENT * EVENTS_PER_RUN} events: seed more runs per agent`);
  }
  return { run, seq: ((event - 1) % EVENTS_PER_RUN) + 1 };
}

/** Runs `worker(index, seq)` in `count` loops at once until `seconds` have passed; returns operations per second. */
async function sustained(count: number, seconds: number, worker: (index: number, seq: number) => Promise<void>): Promise<{ perSecond: number; total: number }> {
  let total = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      for (let seq = 1; performance.now() < until; seq++) {
        await worker(index, seq);
        total++;
      }
    }),
  );
  return { perSecond: total / ((performance.now() - started) / 1000), total };
}

export async function measureIngestion(size: IngestionSize, log: (line: string) => void): Promise<IngestionFigures> {
  const world = await startApiWorld({ AGENT_PLAIN_HTTP: 'allow' });
  const db = new pg.Client({ connectionString: world.databaseUrl });
  const raw = Array.from({ length: AGENTS }, () => new pg.Client({ connectionString: world.databaseUrl }));
  const subscribers: Client[] = [];
  try {
    await db.connect();
    await Promise.all(raw.map((client) => client.connect()));
    const agents = await seedRuns(db, AGENTS * RUNS_PER_AGENT, 'agents');
    const batchAgents = await seedRuns(db, AGENTS * RUNS_PER_AGENT, 'batches');
    const ceilingRuns = await seedRuns(db, AGENTS, 'ceiling');
    const [watched] = await seedRuns(db, 1, 'watched');

    // Warm both paths (connections, prepared plans, the API's JIT) before timing.
    await Promise.all(agents.map((agent) => report(world, agent.token, stepEvent(agent.runId, 1_000_000))));
    await Promise.all(batchAgents.map((agent) => reportBatch(world, agent.token, [stepEvent(agent.runId, 999_999), stepEvent(agent.runId, 1_000_000)])));
    const api = await sustained(AGENTS, size.seconds, (index, event) => {
      const { run, seq } = runOfEvent(agents, index, event);
      return report(world, run.token, stepEvent(run.runId, seq));
    });
    const batches = await sustained(AGENTS, size.seconds, (index, call) => {
      const { run, seq } = runOfEvent(batchAgents, index, (call - 1) * BATCH + 1);
      return reportBatch(world, run.token, Array.from({ length: BATCH }, (_, offset) => stepEvent(run.runId, seq + offset)));
    });
    const insert = `INSERT INTO step_events (run_id, seq, step, status, progress, message, detail, occurred_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
    const ceiling = await sustained(AGENTS, size.seconds, async (index, seq) => {
      const event = stepEvent(ceilingRuns[index].runId, seq);
      await raw[index].query(insert, [event.runId, event.seq, event.step, event.status, event.progress, event.message, null, event.occurredAt]);
    });
    const batchPerSecond = batches.perSecond * BATCH;
    log(`ingestion over ${size.seconds} s: reportStep ${api.perSecond.toFixed(0)} events/s (${api.total} events); reportSteps ${batchPerSecond.toFixed(0)} events/s (${batches.total} batches of ${BATCH}); plain pg INSERT ${ceiling.perSecond.toFixed(0)} rows/s (${ceiling.total} rows)`);

    // Delivery: every subscriber's first message is the snapshot; then one message per event.
    const postedAt = new Map<number, number>();
    const latencies: number[] = [];
    const snapshots: Array<Promise<void>> = [];
    const url = `${world.api.url.replace('http', 'ws')}/graphql`;
    for (let index = 0; index < size.subscribers; index++) {
      const client = createClient({ url, webSocketImpl: WebSocket, lazy: false, connectionParams: { authorization: `Bearer ${world.token}` } });
      subscribers.push(client);
      snapshots.push(
        new Promise<void>((resolve, reject) => {
          const seen = new Set<number>();
          client.subscribe<{ installProgress: { events: Array<{ seq: number }> } }>(
            { query: 'subscription($n: ID!) { installProgress(nodeId: $n) { events { seq } } }', variables: { n: watched.nodeId } },
            {
              next: (message) => {
                const arrived = performance.now();
                for (const { seq } of message.data?.installProgress.events ?? []) {
                  const sent = postedAt.get(seq);
                  if (sent !== undefined && !seen.has(seq)) {
                    seen.add(seq);
                    latencies.push(arrived - sent);
                  }
                }
                resolve();
              },
              error: reject,
              complete: () => undefined,
            },
          );
        }),
      );
    }
    await Promise.all(snapshots);
    for (let seq = 1; seq <= size.events; seq++) {
      postedAt.set(seq, performance.now());
      await report(world, watched.token, stepEvent(watched.runId, seq));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const expected = size.subscribers * size.events;
    for (const deadline = performance.now() + 60_000; latencies.length < expected && performance.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (latencies.length < expected) {
      throw new Error(`only ${latencies.length} of ${expected} deliveries arrived within 60 s`);
    }
    latencies.sort((a, b) => a - b);
    const deliveryP50 = percentile(latencies, 50);
    const deliveryP99 = percentile(latencies, 99);
    log(`delivery to ${size.subscribers} subscribers, ${size.events} events: p50 ${deliveryP50.toFixed(1)} ms, p99 ${deliveryP99.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`);
    return { apiPerSecond: api.perSecond, batchPerSecond, rawPerSecond: ceiling.perSecond, deliveryP50, deliveryP99, deliveries: latencies.length };
  } finally {
    await Promise.all(subscribers.map((client) => client.dispose()));
    await Promise.all([db, ...raw].map((client) => client.end().catch(() => undefined)));
    await world.stop();
  }
}

if (isMain(import.meta.url)) {
  await measureIngestion({ seconds: Number(process.argv[2] ?? 10), subscribers: Number(process.argv[3] ?? 100), events: Number(process.argv[4] ?? 50) }, (line) => console.log(line));
}
