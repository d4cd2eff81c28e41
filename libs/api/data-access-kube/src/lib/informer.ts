import { setTimeout as delay } from 'node:timers/promises';
import type { ConfigurationOptions } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient, type KubeStatus } from './kube-client';

/** A change of one object, as a watch reports it. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What informers need of an object. */
export interface InformerObject {
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** A change of one cached object. `object` is the new state, or the last known one for DELETED. */
export interface InformerEvent<T> {
  type: WatchEventType;
  object: T;
}

/** One page of a list call. */
export interface ListPage<T> {
  items: T[];
  metadata?: { resourceVersion?: string; _continue?: string };
}

/** One list call of a collection, a page at a time (client-node call with the given per-call options). */
export type PagedList<T> = (page: { limit: number; _continue?: string }, options: ConfigurationOptions) => Promise<ListPage<T>>;

/**
 * Every item of a collection, following `continue` like kubectl (pages of 500), and the
 * resourceVersion of the snapshot (every page belongs to the first one's).
 */
export async function listAll<T>(client: KubeClient, description: string, list: PagedList<T>, signal?: AbortSignal, pageSize = 500): Promise<{ items: T[]; resourceVersion: string }> {
  const items: T[] = [];
  let resourceVersion = '';
  let next: string | undefined;
  do {
    const page = await client.call(description, (options) => list({ limit: pageSize, _continue: next }, options), signal);
    items.push(...page.items);
    resourceVersion ||= page.metadata?.resourceVersion ?? '';
    next = page.metadata?._continue || undefined;
  } while (next);
  return { items, resourceVersion };
}

/** Where an informer lists and watches. */
export interface InformerSource<T extends InformerObject> {
  /** Collection path for the watch, e.g. `/api/v1/nodes`. */
  path: string;
  /** What the list call is, for error messages, e.g. `list nodes`. */
  description: string;
  /** One page of the list. */
  list: PagedList<T>;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Tuning of an informer; the defaults suit production, tests shorten them. */
export interface InformerOptions {
  /** Items per list page. Default 500 (kubectl's chunk size). */
  pageSize?: number;
  /** Server-side duration of one watch request. Default: random between 5 and 10 minutes, like client-go's reflector. */
  watchTimeoutSeconds?: number;
  /** First wait after a failure; doubles per consecutive failure up to `maxBackoffMs`. Default 500. */
  initialBackoffMs?: number;
  /** Default 30 000. */
  maxBackoffMs?: number;
  /** Told about every failure (list, watch, handler) and how long until the next attempt. */
  onError?: (error: Error, retryInMs: number) => void;
  /** Told whenever the API answered: a list arrived or a watch stream opened (so after a failure, that it is over). */
  onHealthy?: () => void;
}

/** A running informer. */
export interface Informer<T> {
  /** Resolves once the first list has been delivered as ADDED events. */
  readonly synced: Promise<void>;
  /** The cached objects. */
  list(): T[];
  /** Cuts a wait after a failure short: the next attempt starts now (the backoff itself carries on). */
  retryNow(): void;
  /** Stops watching; resolves when nothing is running any more. */
  stop(): Promise<void>;
}

/** A watch that ended: closed by the server, or told its resourceVersion is too old (410 Gone). */
type WatchOutcome = 'closed' | 'expired';

const keyOf = (obj: InformerObject): string => `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * Keeps a cache of a collection in step with the API the way client-go's reflector does: list
 * (paged), then watch from the list's resourceVersion; on a 410 Gone (history no longer reaches
 * back) list again and report the difference as ADDED/MODIFIED/DELETED; on network or server
 * errors retry with capped exponential backoff, resuming the watch where it stopped.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes
 * @see https://github.com/kubernetes/client-go/blob/master/tools/cache/reflector.go
 */
export function startInformer<T extends InformerObject>(
  client: KubeClient,
  source: InformerSource<T>,
  onEvent: (event: InformerEvent<T>) => void,
  options: InformerOptions = {},
): Informer<T> {
  const pageSize = options.pageSize ?? 500;
  const initialBackoffMs = options.initialBackoffMs ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const stopping = new AbortController();
  let backingOff: AbortController | null = null;
  const cache = new Map<string, T>();
  let resourceVersion = '';
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });

  const emit = (event: InformerEvent<T>): void => {
    try {
      onEvent(event);
    } catch (error) {
      options.onError?.(error instanceof Error ? error : new Error(String(error)), 0);
    }
  };

  const apply = (type: WatchEventType, obj: T): void => {
    const key = keyOf(obj);
    const cached = cache.get(key);
    if (type === 'DELETED') {
      if (cached) {
        cache.delete(key);
        emit({ type, object: obj });
      }
      return;
    }
    if (cached && cached.metadata?.resourceVersion === obj.metadata?.resourceVersion) {
      return;
    }
    if (cached && cached.metadata?.uid !== obj.metadata?.uid) {
      // Deleted and created again under the same name while we were not looking.
      emit({ type: 'DELETED', object: cached });
      cache.set(key, obj);
      emit({ type: 'ADDED', object: obj });
      return;
    }
    cache.set(key, obj);
    emit({ type: cached ? 'MODIFIED' : 'ADDED', object: obj });
  };

  const relist = async (): Promise<string> => {
    // The watch resumes from the list's snapshot.
    const { items, resourceVersion: listVersion } = await listAll(client, source.description, source.list, stopping.signal, pageSize);
    const fresh = new Map(items.map((item) => [keyOf(item), item]));
    for (const [key, cached] of [...cache]) {
      if (!fresh.has(key)) {
        cache.delete(key);
        emit({ type: 'DELETED', object: cached });
      }
    }
    for (const item of items) {
      apply('ADDED', item);
    }
    return listVersion;
  };

  const watchOnce = async (): Promise<{ outcome: WatchOutcome; delivered: number }> => {
    const timeoutSeconds = options.watchTimeoutSeconds ?? Math.floor(300 + Math.random() * 300);
    const local = new AbortController();
    const onStop = (): void => local.abort();
    stopping.signal.addEventListener('abort', onStop, { once: true });
    // A stream the server should have closed long ago is treated as a broken connection.
    const guard = setTimeout(() => local.abort(), timeoutSeconds * 1000 + 30_000);
    // Written by the line handler, hence an object rather than narrowed locals.
    const seen: { expired: boolean; delivered: number; failure: KubeStatus | null } = { expired: false, delivered: 0, failure: null };
    try {
      await client.watch(
        source.path,
        { resourceVersion, allowWatchBookmarks: true, timeoutSeconds, labelSelector: source.labelSelector, fieldSelector: source.fieldSelector },
        (type, object) => {
          if (!isRecord(object)) {
            return;
          }
          const obj = object as T;
          seen.delivered++;
          if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
            apply(type, obj);
            resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
          } else if (type === 'BOOKMARK') {
            resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
          } else if (type === 'ERROR') {
            const status = object as KubeStatus;
            seen.expired = status.code === 410;
            seen.failure = seen.expired ? null : status;
            local.abort();
          }
        },
        local.signal,
        () => options.onHealthy?.(),
      );
    } finally {
      clearTimeout(guard);
      stopping.signal.removeEventListener('abort', onStop);
    }
    const { expired, delivered, failure: status } = seen;
    if (expired) {
      return { outcome: 'expired', delivered };
    }
    if (status) {
      throw new KubeApiError(`watch ${source.path}: ${status.message ?? 'error event'}`, `watch ${source.path}`, 'status', status.code ?? null, status);
    }
    if (local.signal.aborted && !stopping.signal.aborted) {
      throw new KubeApiError(`watch ${source.path}: the server did not close the stream after ${timeoutSeconds} s`, `watch ${source.path}`, 'timeout', null, null);
    }
    return { outcome: 'closed', delivered };
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      try {
        if (!resourceVersion) {
          resourceVersion = await relist();
          markSynced();
          options.onHealthy?.();
        }
        const started = Date.now();
        const { outcome, delivered } = await watchOnce();
        if (outcome === 'expired') {
          // Too old to resume: list again (the list itself paces this loop).
          resourceVersion = '';
          continue;
        }
        if (delivered === 0 && Date.now() - started < 1000) {
          // A stream that ends at once without a word would make this loop spin.
          throw new KubeApiError(`watch ${source.path}: the stream ended at once`, `watch ${source.path}`, 'network', null, null);
        }
        failures = 0;
      } catch (error) {
        if (stopping.signal.aborted) {
          break;
        }
        if (error instanceof KubeApiError && error.statusCode === 410) {
          resourceVersion = '';
          continue;
        }
        failures++;
        const wait = Math.round(Math.min(maxBackoffMs, initialBackoffMs * 2 ** (failures - 1)) * (0.8 + Math.random() * 0.4));
        options.onError?.(error instanceof Error ? error : new Error(String(error)), wait);
        backingOff = new AbortController();
        await delay(wait, undefined, { signal: AbortSignal.any([stopping.signal, backingOff.signal]) }).catch(() => undefined);
        backingOff = null;
      }
    }
  };

  const running = run();
  return {
    synced,
    list: () => [...cache.values()],
    retryNow() {
      backingOff?.abort();
    },
    async stop() {
      stopping.abort();
      await running;
    },
  };
}
