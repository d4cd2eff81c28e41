/**
 * The event bus between replicas (Postgres NOTIFY) under a stream of agent events: 50 agents each
 * report every 10 ms (5,000 events/s offered) for 2 s, on a fresh database of the Postgres server at
 * 127.0.0.1:5432. A listener on its own connection (another replica) records when each event
 * arrives. Ours: `createPostgresEventBus`, which sends the events published while a NOTIFY is on
 * its way together in the next one. The reference, in the same run: the design before it, one
 * `pg_notify` per event on one connection.
 *
 *   npx tsx bench/event-bus.ts [events=10000]
 *
 * Prints figures; not part of the test suite.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import pino from 'pino';
import { createTestDatabase } from '@ccos/api/data-access-db/testing';
import { createPostgresEventBus } from '@ccos/api/util-graphql';
import { type BenchOptions, type Figure, isMain, percentile, printFigures } from './support/row';

const CHANNEL = 'ccos_events';
const AGENTS = 50;
const TICK_MS = 10;

interface Run {
  readonly p50: number;
  readonly p99: number;
  /** CPU of this process (publishing and listening) per 1,000 events. */
  readonly cpuMsPerThousand: number;
  readonly notifications: number;
}

/** Publishes `events` at the agents' pace through `publish` and measures their arrival at a separate listener. */
async function measure(url: string, events: number, publish: (topic: string, payload: unknown) => void): Promise<Run> {
  const listener = new pg.Client({ connectionString: url });
  const arrivals: number[] = [];
  let notifications = 0;
  let allArrived: () => void = () => undefined;
  const arrived = new Promise<void>((done) => (allArrived = done));
  listener.on('notification', (message) => {
    notifications++;
    const now = performance.now();
    const heard = JSON.parse(message.payload ?? '{}') as { e?: Array<{ a: Array<{ at: number }> }>; a?: Array<{ at: number }> };
    for (const event of heard.e ?? [{ a: heard.a ?? [] }]) {
      arrivals.push(now - (event.a[0]?.at ?? now));
    }
    if (arrivals.length >= events) {
      allArrived();
    }
  });
  await listener.connect();
  await listener.query(`LISTEN ${CHANNEL}`);
  const cpu = process.cpuUsage();
  let sent = 0;
  await new Promise<void>((sentAll) => {
    const timer = setInterval(() => {
      for (let agent = 0; agent < AGENTS && sent < events; agent++, sent++) {
        publish(`installProgress:run-${agent}`, { at: performance.now(), seq: sent, step: 'DOWNLOAD_ARTIFACTS', status: 'PROGRESS', detail: { bytes: sent * 1024 } });
      }
      if (sent >= events) {
        clearInterval(timer);
        sentAll();
      }
    }, TICK_MS);
  });
  await arrived;
  const used = process.cpuUsage(cpu);
  await listener.end();
  const sorted = [...arrivals].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), cpuMsPerThousand: (used.user + used.system) / 1000 / (events / 1000), notifications };
}

async function compare(events: number, log: (line: string) => void): Promise<{ batched: Run; perEvent: Run }> {
  const database = await createTestDatabase('ccos_bench_bus');
  try {
    const bus = await createPostgresEventBus(database.url, pino({ level: 'error' }));
    const batched = await measure(database.url, events, (topic, payload) => bus.publish(topic, payload));
    await bus.close();
    // As the bus did: a pool of one connection keeps the NOTIFYs in publish order.
    const publisher = new pg.Pool({ connectionString: database.url, max: 1 });
    const perEvent = await measure(database.url, events, (topic, payload) => {
      void publisher.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ k: topic, a: [payload] })]);
    });
    await publisher.end();
    for (const [name, run] of [['batched', batched], ['one NOTIFY per event', perEvent]] as const) {
      log(`${name}: ${events} events in ${run.notifications} notifications; arrival p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms; ${run.cpuMsPerThousand.toFixed(0)} ms CPU per 1,000 events`);
    }
    return { batched, perEvent };
  } finally {
    await database.drop();
  }
}

export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const events = options.smoke ? 500 : 10_000;
  const { batched, perEvent } = await compare(events, options.log);
  const offered = `${(AGENTS * 1000) / TICK_MS} events/s offered`;
  return [
    {
      name: `publish → another replica, p99, ${offered}`,
      value: batched.p99,
      unit: 'ms',
      reference: { name: 'one NOTIFY per event (the design before)', value: perEvent.p99, measured: true },
      better: 'lower',
    },
    {
      name: `CPU per 1,000 events (publishing and listening process), ${offered}`,
      value: batched.cpuMsPerThousand,
      unit: 'ms',
      reference: { name: 'one NOTIFY per event', value: perEvent.cpuMsPerThousand, measured: true },
      better: 'lower',
    },
  ];
}

if (isMain(import.meta.url)) {
  void benchRows({ smoke: false, log: (line) => console.log(line) }).then(printFigures);
}
