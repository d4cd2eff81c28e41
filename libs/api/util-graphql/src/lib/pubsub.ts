import { setMaxListeners } from 'node:events';
import { createPubSub } from '@graphql-yoga/subscription';
import pg from 'pg';
import type { Logger } from 'pino';
import type { PubSub } from 'type-graphql';
import { Backoff } from '@ccos/shared/util-timing';

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
const MAX_PAYLOAD = 7900;
/** How the bus's two connections name themselves in `pg_stat_activity`. */
export const PUBLISHER_APPLICATION_NAME = 'ccos-scaler events (publish)';
export const LISTENER_APPLICATION_NAME = 'ccos-scaler events (listen)';

/**
 * Several replicas: every publish goes through Postgres NOTIFY, and every replica
 * (this one included) delivers what it hears to its own subscribers. The listening
 * connection reconnects with backoff if it drops.
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
  // 250 ms doubling to 10 s, no jitter: one listener per replica, nothing to spread.
  const backoff = new Backoff({ initialMs: 250, maxMs: 10_000, jitter: 0 });

  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: url, application_name: LISTENER_APPLICATION_NAME });
    client.on('notification', (message) => {
      if (message.channel !== CHANNEL || !message.payload) {
        return;
      }
      try {
        const { k, a } = JSON.parse(message.payload) as { k: string; a: unknown[] };
        local.publish(k, ...(a as []));
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

  return {
    publish(routingKey, ...args) {
      const payload = JSON.stringify({ k: routingKey, a: args });
      if (Buffer.byteLength(payload) > MAX_PAYLOAD) {
        logger.error({ topic: routingKey, bytes: Buffer.byteLength(payload) }, 'event too large for NOTIFY; delivered to this replica only');
        local.publish(routingKey, ...(args as []));
        return;
      }
      publisher.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]).catch((error: unknown) => {
        logger.error({ err: error, topic: routingKey }, 'could not publish an event');
      });
    },
    subscribe: (routingKey, dynamicId) => local.subscribe(routingKey, dynamicId as never),
    async close() {
      closed = true;
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
