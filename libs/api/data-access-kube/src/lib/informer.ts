import type { ConfigurationOptions } from '@kubernetes/client-node';
import { Backoff, SystemClock, type BackoffPolicy, type Clock } from '@ccos/shared/util-timing';
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
  /**
   * What of each object to keep, applied before it is cached or reported (client-go's
   * SetTransform): a cache of thousands of objects holds only what its readers need.
   */
  transform?: (obj: T) => T;
  /** Named index functions (client-go's Indexers): the keys each object is found under by {@link Informer.byIndex}. */
  indexers?: Readonly<Record<string, Indexer<T>>>;
}

/** The index keys of one object, e.g. a pod's node name. */
export type Indexer<T> = (obj: T) => readonly string[];

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
  /** Paces the backoff and the watch guard; tests pass a virtual one. Default: the process's clock. */
  clock?: Clock;
  /** Source of jitter, in [0, 1). Default Math.random. */
  random?: () => number;
}

/** A running informer. */
export interface Informer<T> {
  /** Resolves once the first list has been delivered as ADDED events. */
  readonly synced: Promise<void>;
  /** The cached objects. */
  list(): T[];
  /** The cached objects one of the source's indexers files under `key`. */
  byIndex(index: string, key: string): T[];
  /** Cuts a wait after a failure short: the next attempt starts now (the backoff itself carries on). */
  retryNow(): void;
  /** Stops watching; resolves when nothing is running any more. */
  stop(): Promise<void>;
}

/**
 * What the informer is doing: `listing` (a full list, the first one or after the watch history ran
 * out), `watching` (a watch from the last resourceVersion), `backing-off` (waiting after a failure;
 * resumes the watch if it has a resourceVersion, else lists), `stopped`.
 */
export type InformerPhase = 'listing' | 'watching' | 'backing-off' | 'stopped';

/** How one watch request ended: closed by the server, or told its resourceVersion is too old (410 Gone). */
export type WatchOutcome = { readonly outcome: 'closed' | 'expired'; readonly delivered: number };

/** client-go's reflector paces retries like this: doubling, capped, ±20 % jitter. */
function informerBackoff(options: InformerOptions): BackoffPolicy {
  return { initialMs: options.initialBackoffMs ?? 500, maxMs: options.maxBackoffMs ?? 30_000, jitter: 0.2, spread: 'around' };
}

/** A watch stream that ends this soon without delivering anything counts as a failure, so the loop cannot spin. */
const QUICK_CLOSE_MS = 1000;
/** How long past its own timeoutSeconds a watch may stay open before it counts as a broken connection. */
const WATCH_GUARD_GRACE_MS = 30_000;

const keyOf = (obj: InformerObject): string => `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * The informer's cache and the events its changes make: pure, so every rule (same resourceVersion
 * is no change, a new UID under a known name is a delete and an add, a re-list reports the
 * difference) is testable without an API server.
 */
export class InformerCache<T extends InformerObject> {
  private readonly objects = new Map<string, T>();
  /** Per indexer: index key → object keys. */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(
    private readonly emit: (event: InformerEvent<T>) => void,
    private readonly indexers: Readonly<Record<string, Indexer<T>>> = {},
  ) {
    for (const name of Object.keys(indexers)) {
      this.indices.set(name, new Map());
    }
  }

  /** One change, as a watch reports it. */
  apply(type: WatchEventType, obj: T): void {
    const key = keyOf(obj);
    const cached = this.objects.get(key);
    if (type === 'DELETED') {
      if (cached) {
        this.remove(key, cached);
        this.emit({ type, object: obj });
      }
      return;
    }
    if (cached && cached.metadata?.resourceVersion === obj.metadata?.resourceVersion) {
      return;
    }
    if (cached && cached.metadata?.uid !== obj.metadata?.uid) {
      // Deleted and created again under the same name while we were not looking.
      this.emit({ type: 'DELETED', object: cached });
      this.store(key, obj, cached);
      this.emit({ type: 'ADDED', object: obj });
      return;
    }
    this.store(key, obj, cached);
    this.emit({ type: cached ? 'MODIFIED' : 'ADDED', object: obj });
  }

  /** A full list: what is gone is DELETED, the rest applied as ADDED (or MODIFIED when known and changed). */
  replace(items: readonly T[]): void {
    const fresh = new Set(items.map(keyOf));
    for (const [key, cached] of [...this.objects]) {
      if (!fresh.has(key)) {
        this.remove(key, cached);
        this.emit({ type: 'DELETED', object: cached });
      }
    }
    for (const item of items) {
      this.apply('ADDED', item);
    }
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  byIndex(index: string, indexKey: string): T[] {
    const keys = this.indices.get(index);
    if (!keys) {
      throw new Error(`no indexer named ${index}`);
    }
    return [...(keys.get(indexKey) ?? [])].map((key) => this.objects.get(key)).filter((obj): obj is T => obj !== undefined);
  }

  private store(key: string, obj: T, before: T | undefined): void {
    if (before) {
      this.unindex(key, before);
    }
    this.objects.set(key, obj);
    for (const [name, index] of this.indices) {
      for (const indexKey of this.indexers[name](obj)) {
        const keys = index.get(indexKey) ?? new Set<string>();
        keys.add(key);
        index.set(indexKey, keys);
      }
    }
  }

  private remove(key: string, cached: T): void {
    this.objects.delete(key);
    this.unindex(key, cached);
  }

  private unindex(key: string, obj: T): void {
    for (const [name, index] of this.indices) {
      for (const indexKey of this.indexers[name](obj)) {
        const keys = index.get(indexKey);
        keys?.delete(key);
        if (keys?.size === 0) {
          index.delete(indexKey);
        }
      }
    }
  }
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
  const informer = new Reflector(client, source, onEvent, options);
  informer.start();
  return informer;
}

/** The informer's loop: one method per {@link InformerPhase}, each returning the phase that follows. */
export class Reflector<T extends InformerObject> implements Informer<T> {
  readonly synced: Promise<void>;
  private currentPhase: InformerPhase = 'listing';
  private readonly cache: InformerCache<T>;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly backoff: Backoff;
  private readonly stopping = new AbortController();
  private backingOff: AbortController | null = null;
  private resourceVersion = '';
  /** The wait the last failure earned; `backing-off` sleeps it. */
  private pendingWait = 0;
  private markSynced: () => void = () => undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: KubeClient,
    private readonly source: InformerSource<T>,
    onEvent: (event: InformerEvent<T>) => void,
    private readonly options: InformerOptions = {},
  ) {
    this.clock = options.clock ?? new SystemClock();
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff(informerBackoff(options), this.random);
    this.cache = new InformerCache<T>((event) => {
      try {
        onEvent(event);
      } catch (error) {
        this.reportError(error, 0);
      }
    }, source.indexers);
    this.synced = new Promise<void>((resolve) => {
      this.markSynced = resolve;
    });
  }

  get phase(): InformerPhase {
    return this.currentPhase;
  }

  start(): void {
    this.running = this.run();
  }

  list(): T[] {
    return this.cache.list();
  }

  byIndex(index: string, key: string): T[] {
    return this.cache.byIndex(index, key);
  }

  retryNow(): void {
    this.backingOff?.abort();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const next = await this.step(this.currentPhase).catch((error: unknown) => this.failed(error));
      this.currentPhase = this.stopping.signal.aborted ? 'stopped' : next;
    }
    this.currentPhase = 'stopped';
  }

  private step(phase: InformerPhase): Promise<InformerPhase> {
    switch (phase) {
      case 'listing':
        return this.listPhase();
      case 'watching':
        return this.watchPhase();
      case 'backing-off':
        return this.backOffPhase();
      case 'stopped':
        return Promise.resolve('stopped');
    }
  }

  /** A full list; the watch resumes from its snapshot. */
  private async listPhase(): Promise<InformerPhase> {
    const { transform, list } = this.source;
    // Each page is trimmed as it arrives: whole objects kept until the last page held a 30,000-pod cluster's 400 MB of heap at once.
    const trimmedPages: PagedList<T> = transform ? (page, options) => list(page, options).then((answer) => ({ ...answer, items: answer.items.map((item) => transform(item)) })) : list;
    const { items, resourceVersion } = await listAll(this.client, this.source.description, trimmedPages, this.stopping.signal, this.options.pageSize ?? 500);
    this.cache.replace(items);
    this.resourceVersion = resourceVersion;
    this.markSynced();
    this.options.onHealthy?.();
    return 'watching';
  }

  private async watchPhase(): Promise<InformerPhase> {
    const started = this.clock.monotonic();
    const { outcome, delivered } = await this.watchOnce();
    if (outcome === 'expired') {
      // Too old to resume: list again (the list itself paces this loop).
      this.resourceVersion = '';
      return 'listing';
    }
    if (delivered === 0 && this.clock.monotonic() - started < QUICK_CLOSE_MS) {
      throw new KubeApiError(`watch ${this.source.path}: the stream ended at once`, `watch ${this.source.path}`, 'network', null, null);
    }
    this.backoff.reset();
    return 'watching';
  }

  /** The phase after a failed list or watch: a 410 lists again at once, anything else waits. */
  private failed(error: unknown): InformerPhase {
    if (this.stopping.signal.aborted) {
      return 'stopped';
    }
    if (error instanceof KubeApiError && error.statusCode === 410) {
      this.resourceVersion = '';
      return 'listing';
    }
    this.pendingWait = this.backoff.next();
    this.reportError(error, this.pendingWait);
    return 'backing-off';
  }

  private async backOffPhase(): Promise<InformerPhase> {
    this.backingOff = new AbortController();
    await this.clock.sleep(this.pendingWait, AbortSignal.any([this.stopping.signal, this.backingOff.signal]));
    this.backingOff = null;
    return this.resourceVersion ? 'watching' : 'listing';
  }

  private reportError(error: unknown, retryInMs: number): void {
    this.options.onError?.(error instanceof Error ? error : new Error(String(error)), retryInMs);
  }

  private async watchOnce(): Promise<WatchOutcome> {
    const { source } = this;
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? Math.floor(300 + this.random() * 300);
    const local = new AbortController();
    const onStop = (): void => local.abort();
    this.stopping.signal.addEventListener('abort', onStop, { once: true });
    // A stream the server should have closed long ago is treated as a broken connection.
    const guardDone = new AbortController();
    void this.clock.sleep(timeoutSeconds * 1000 + WATCH_GUARD_GRACE_MS, guardDone.signal).then(() => {
      if (!guardDone.signal.aborted) {
        local.abort();
      }
    });
    // Written by the line handler, hence an object rather than narrowed locals.
    const seen: { expired: boolean; delivered: number; failure: KubeStatus | null } = { expired: false, delivered: 0, failure: null };
    try {
      await this.client.watch(
        source.path,
        { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds, labelSelector: source.labelSelector, fieldSelector: source.fieldSelector },
        (type, object) => {
          if (!isRecord(object)) {
            return;
          }
          const obj = object as T;
          seen.delivered++;
          if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
            this.cache.apply(type, source.transform ? source.transform(obj) : obj);
            this.resourceVersion = obj.metadata?.resourceVersion ?? this.resourceVersion;
          } else if (type === 'BOOKMARK') {
            this.resourceVersion = obj.metadata?.resourceVersion ?? this.resourceVersion;
          } else if (type === 'ERROR') {
            const status = object as KubeStatus;
            seen.expired = status.code === 410;
            seen.failure = seen.expired ? null : status;
            local.abort();
          }
        },
        local.signal,
        () => this.options.onHealthy?.(),
      );
    } finally {
      guardDone.abort();
      this.stopping.signal.removeEventListener('abort', onStop);
    }
    const { expired, delivered, failure: status } = seen;
    if (expired) {
      return { outcome: 'expired', delivered };
    }
    if (status) {
      throw new KubeApiError(`watch ${source.path}: ${status.message ?? 'error event'}`, `watch ${source.path}`, 'status', status.code ?? null, status);
    }
    if (local.signal.aborted && !this.stopping.signal.aborted) {
      throw new KubeApiError(`watch ${source.path}: the server did not close the stream after ${timeoutSeconds} s`, `watch ${source.path}`, 'timeout', null, null);
    }
    return { outcome: 'closed', delivered };
  }
}
