import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventBus, LISTENER_APPLICATION_NAME, PUBLISHER_APPLICATION_NAME, createInProcessEventBus, createPostgresEventBus } from './pubsub';
import { TOPICS } from './topics';

const ADMIN_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Ends the bus's connection named `applicationName`, as a Postgres restart or failover would. */
async function terminate(database: string, applicationName: string): Promise<number> {
  return admin(async (client) => {
    const result = await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [database, applicationName]);
    return result.rowCount ?? 0;
  });
}

describe('the Postgres event bus', () => {
  const database = `ccos_pubsub_${randomBytes(4).toString('hex')}`;
  let bus: EventBus;
  const warnings: string[] = [];

  beforeAll(async () => {
    await admin((client) => client.query(`CREATE DATABASE ${database}`));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg as string) });
    bus = await createPostgresEventBus(url.toString(), logger);
  });
  afterAll(async () => {
    await bus?.close();
    await admin(async (client) => {
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      await client.query(`DROP DATABASE IF EXISTS ${database}`);
    });
  });

  /** Subscribes to `topic` and resolves with the first payload published after it. */
  const next = async (topic: string): Promise<unknown> => {
    const iterator = bus.subscribe(topic)[Symbol.asyncIterator]();
    const value = iterator.next().then((result) => result.value);
    void value.finally(() => iterator.return?.());
    return value;
  };

  it('keeps running when Postgres drops the idle publishing connection, and the next event goes out on a new one', async () => {
    const first = next('t1');
    bus.publish('t1', { n: 1 });
    expect(await first).toEqual({ n: 1 });

    expect(await terminate(database, PUBLISHER_APPLICATION_NAME)).toBe(1);
    await expect.poll(() => warnings.some((message) => message.startsWith('event publisher connection lost')), { timeout: 5000 }).toBe(true);

    const second = next('t1');
    bus.publish('t1', { n: 2 });
    expect(await second).toEqual({ n: 2 });
  });

  /** Every notification on the bus's channel, as another replica's listener hears them. */
  const eavesdrop = async (): Promise<{ payloads: string[]; stop(): Promise<void> }> => {
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.toString() });
    const payloads: string[] = [];
    client.on('notification', (message) => payloads.push(message.payload ?? ''));
    await client.connect();
    await client.query('LISTEN ccos_events');
    return { payloads, stop: () => client.end() };
  };

  it('delivers a burst of events in publish order, in a handful of notifications instead of one per event', async () => {
    const raw = await eavesdrop();
    const iterator = bus.subscribe('burst')[Symbol.asyncIterator]();
    const received: unknown[] = [];
    const all = (async () => {
      while (received.length < 500) {
        received.push((await iterator.next()).value);
      }
      await iterator.return?.();
    })();
    for (let n = 0; n < 500; n++) {
      bus.publish('burst', { n, text: `event ${n} of a burst` });
    }
    await all;
    expect(received).toEqual(Array.from({ length: 500 }, (_, n) => ({ n, text: `event ${n} of a burst` })));
    await expect.poll(() => raw.payloads.flatMap((payload) => (JSON.parse(payload) as { e: unknown[] }).e).length).toBe(500);
    // 500 events of about 60 bytes: the first goes alone, the rest fit in 4–5 payloads of under 8000 bytes.
    expect(raw.payloads.length).toBeLessThanOrEqual(10);
    expect(raw.payloads.every((payload) => Buffer.byteLength(payload) < 8000)).toBe(true);
    await raw.stop();
  });

  it('delivers the same event published twice in a row twice (Postgres folds identical payloads of one transaction into one)', async () => {
    const iterator = bus.subscribe('twice')[Symbol.asyncIterator]();
    const both = Promise.all([iterator.next(), iterator.next()]);
    bus.publish('twice', { same: true });
    bus.publish('twice', { same: true });
    bus.publish('twice', { same: true });
    expect((await both).map((result) => result.value)).toEqual([{ same: true }, { same: true }]);
    expect((await iterator.next()).value).toEqual({ same: true });
    await iterator.return?.();
  });

  it('still delivers a single event as a replica of the previous release sends it, during a rolling update', async () => {
    const heard = next('old');
    // NOTIFY reaches listeners of the same database only.
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    const older = new pg.Client({ connectionString: url.toString() });
    await older.connect();
    await older.query('SELECT pg_notify($1, $2)', ['ccos_events', JSON.stringify({ k: 'old', a: [{ from: 'an older replica' }] })]);
    await older.end();
    expect(await heard).toEqual({ from: 'an older replica' });
  });

  it('keeps an event too large for NOTIFY to this replica, and says so', async () => {
    const raw = await eavesdrop();
    const heard = next('large');
    bus.publish('large', { text: 'x'.repeat(9000) });
    expect(await heard).toEqual({ text: 'x'.repeat(9000) });
    expect(warnings).toContain('event too large for NOTIFY; delivered to this replica only');
    bus.publish('large', { text: 'small' });
    await expect.poll(() => raw.payloads.length).toBe(1);
    expect(raw.payloads[0]).toContain('small');
    await raw.stop();
  });

  it('listens again after Postgres drops the listening connection, and tells its subscribers that they may have missed events', async () => {
    const resumed = next(TOPICS.EVENTS_RESUMED);
    expect(await terminate(database, LISTENER_APPLICATION_NAME)).toBe(1);
    expect(await resumed).toBeNull();
    await expect.poll(() => admin(async (client) => (await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [database, LISTENER_APPLICATION_NAME])).rows[0].n), { timeout: 10_000 }).toBe(1);
    // LISTEN runs right after the connection opens: publish until the new listener hears.
    const heard = next('t2');
    let delivered: unknown;
    void heard.then((value) => (delivered = value));
    await expect.poll(() => {
      bus.publish('t2', { n: 3 });
      return delivered;
    }, { timeout: 10_000, interval: 100 }).toEqual({ n: 3 });
  });
});

describe('the in-process event bus', () => {
  it('delivers one event to 100 subscribers of a topic without a listener-leak warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const bus = createInProcessEventBus();
    try {
      const iterators = Array.from({ length: 100 }, () => bus.subscribe('INSTALL_PROGRESS', 'run-1')[Symbol.asyncIterator]());
      const received = Promise.all(iterators.map((iterator) => iterator.next().then((result) => result.value)));
      bus.publish('INSTALL_PROGRESS', 'run-1', { seq: 1 });
      expect(await received).toEqual(Array.from({ length: 100 }, () => ({ seq: 1 })));
      await Promise.all(iterators.map((iterator) => iterator.return?.()));
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await bus.close();
    }
  });
});
