import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createPubSub } from '@graphql-yoga/subscription';
import pg from 'pg';
import type { Logger } from 'pino';
import type { PubSub } from 'type-graphql';
import { Backoff } from '@ccos/shared/util-timing';
import { TOPICS } from './topics';

/**
 * Events for subscriptions. Payloads must be plain JSON (ISO strings for dates): with
 * several replicas they travel through Postgres NOTIFY, whose payload limit is 8000 bytes.
 */
export interface EventBus extends PubSub {
  close(): Promise<void>;
}

/**
 * The in-process fan-out. Every subscriber of a topic is one listener on it (a hundred
 * browsers following one install are a hundred), so Node's leak warning at 11 would be noise.
 */
function createLocalPubSub(): ReturnType<typeof createPubSub> {
  const eventTarget = new EventTarget();
  setMaxListeners(0, eventTarget);
  return createPubSub({ eventTarget: eventTarget as never });
}

/** One process: the embedded database cannot carry LISTEN/NOTIFY across connections. */
export function createInProcessEventBus(): EventBus {
  const local = createLocalPubSub();
  return {
    publish: (routingKey, ...args) => local.publish(routingKey, ...(args as [])),
    subscribe: (routingKey, dynamicId) => local.subscribe(routingKey, dynamicId as never),
    close: async () => undefined,
  };
}

const CHANNEL = 'ccos_events';
/** Postgres refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD = 7900;
/** Room a batch's envelope takes (`{"p":"<uuid>","s":<n>,"e":[…]}`): the largest single event is what is left. */
const ENVELOPE_BYTES = 80;
const MAX_EVENT = MAX_PAYLOAD - ENVELOPE_BYTES;

/** One notification: the events this replica published since its last one, in order. */
interface EventBatch {
  /** The publishing bus (Postgres delivers only one of identical payloads sent in one transaction: these never are). */
  readonly p: string;
  readonly s: number;
  readonly e: ReadonlyArray<{ readonly k: string; readonly a: unknown[] }>;
}

/**
 * Packs serialized events, in order, into as few NOTIFY payloads as fit under MAX_PAYLOAD.
 * Each event is at most MAX_EVENT bytes, so each fits one payload on its own.
 */
function packBatches(events: readonly string[], publisherId: string, nextSequence: () => number): string[] {
  const payloads: string[] = [];
  let current: string[] = [];
  let bytes = 0;
  const seal = () => {
    payloads.push(`{"p":"${publisherId}","s":${nextSequence()},"e":[${current.join(',')}]}`);
    current = [];
    bytes = 0;
  };
  for (const event of events) {
    const size = Buffer.byteLength(event) + 1;
    if (current.length > 0 && bytes + size > MAX_EVENT) {
      seal();
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) {
    seal();
  }
  return payloads;
}

/** How the bus's two connections name themselves in `pg_stat_activity`. */
export const PUBLISHER_APPLICATION_NAME = 'ccos-scaler events (publish)';
export const LISTENER_APPLICATION_NAME = 'ccos-scaler events (listen)';

/**
 * Several replicas: every publish goes through Postgres NOTIFY, and every replica
 * (this one included) delivers what it hears to its own subscribers. The listening
 * connection reconnects with backoff if it drops, and then tells this replica's subscribers
 * (TOPICS.EVENTS_RESUMED) that events of the gap may have passed them by. Events published while
 * a NOTIFY is on its way go together in the next one (several per payload, several payloads per
 * statement), so a burst costs a round trip per batch instead of one per event, in publish order.
 */
export async function createPostgresEventBus(url: string, logger: Logger): Promise<EventBus> {
  const local = createLocalPubSub();
  // One connection keeps NOTIFYs in publish order.
  const publisher = new pg.Pool({ connectionString: url, max: 1, application_name: PUBLISHER_APPLICATION_NAME });
  // An idle connection that Postgres drops (a restart, a failover) is an 'error' on the pool:
  // unheard, it would end the process. The next publish opens a new connection.
  publisher.on('error', (error) => logger.warn({ err: error }, 'event publisher connection lost; the next event reconnects'));
  let listener: pg.Client | null = null;
  let closed = false;
  let connectedBefore = false;
  // 250 ms doubling to 10 s, no jitter: one listener per replica, nothing to spread.
  const backoff = new Backoff({ initialMs: 250, maxMs: 10_000, jitter: 0 });

  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url, application_name: LISTENER_APPLICATION_NAME });
    client.on('notification', (message) => {
      if (message.channel !== CHANNEL || !message.payload) {
        return;
      }
      try {
        // A batch, or one event as a replica of an earlier release sends it during a rolling update.
        const heard = JSON.parse(message.payload) as EventBatch | EventBatch['e'][number];
        for (const { k, a } of 'e' in heard ? heard.e : [heard]) {
          local.publish(k, ...(a as []));
        }
      } catch (error) {
        logger.warn({ err: error }, 'ignored a malformed event notification');
      }
    });
    client.on('error', (error) => {
      logger.warn({ err: error }, 'event listener connection failed; reconnecting');
      void client.end().catch(() => undefined);
      scheduleReconnect();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    listener = client;
    backoff.reset();
    if (connectedBefore) {
      logger.info('event listener connected again; subscribers catch up on what they may have missed');
      local.publish(TOPICS.EVENTS_RESUMED);
    }
    connectedBefore = true;
  };
  const scheduleReconnect = (): void => {
    listener = null;
    if (closed) {
      return;
    }
    setTimeout(() => {
      connect().catch((error: unknown) => {
        logger.warn({ err: error }, 'event listener reconnect failed');
        scheduleReconnect();
      });
    }, backoff.next()).unref();
  };
  await connect();

  const publisherId = randomUUID();
  let sequence = 0;
  let pending: string[] = [];
  let flushing: Promise<void> | null = null;
  const flush = async (): Promise<void> => {
    while (pending.length > 0) {
      const events = pending;
      pending = [];
      const payloads = packBatches(events, publisherId, () => ++sequence);
      // One statement, one transaction: its notifications are delivered in this order.
      await publisher.query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [CHANNEL, payloads]).catch((error: unknown) => {
        logger.error({ err: error, events: events.length }, 'could not publish events');
      });
    }
    flushing = null;
  };

  return {
    publish(routingKey, ...args) {
      const event = JSON.stringify({ k: routingKey, a: args });
      if (Buffer.byteLength(event) > MAX_EVENT) {
        logger.error({ topic: routingKey, bytes: Buffer.byteLength(event) }, 'event too large for NOTIFY; delivered to this replica only');
        local.publish(routingKey, ...(args as []));
        return;
      }
      pending.push(event);
      // Once the caller's synchronous code is done: events published together go out in one statement.
      flushing ??= Promise.resolve().then(flush);
    },
    subscribe: (routingKey, dynamicId) => local.subscribe(routingKey, dynamicId as never),
    async close() {
      closed = true;
      await flushing;
      await (listener as pg.Client | null)?.end().catch(() => undefined);
      await publisher.end();
    },
  };
}

/**
 * Yields `first`, then everything `source` yields. The source is subscribed before
 * `first` is produced, so nothing published in between is lost.
 */
export async function* startWith<T>(first: () => Promise<T> | T, source: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    yield await first();
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        return;
      }
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}
