import type { KubeObject } from './kube-object';
import { objectKey } from './kube-object';
import { resourceId, type ResourceDefinition } from './resource-definition';

/** Kinds of change a watch reports (BOOKMARK and ERROR are produced by the watch itself). */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change. `object` carries the resourceVersion of the change, also for DELETED. */
export interface StoreEvent {
  type: ChangeType;
  resource: ResourceDefinition;
  key: string;
  object: KubeObject;
  previous?: KubeObject;
  rv: number;
  /** Serialized `object`, filled on first use and shared by every watcher. */
  json?: string;
}

interface Entry {
  obj: KubeObject;
  json?: string;
}

/** Objects, history and indexes of one resource. */
class ResourceTable {
  readonly objects = new Map<string, Entry>();
  sortedKeys: string[] | undefined;
  /** Committed events in rv order from `logStart` on: the watch cache's window and etcd's uncompacted history. */
  log: StoreEvent[] = [];
  /** Record time (ms) of each event in `log`, for the watch cache's freshness rule. */
  logTimes: number[] = [];
  /** Index into `log` of the oldest event the watch cache still holds. */
  windowStart = 0;
  /** Size the watch cache has grown or shrunk to. */
  capacity: number;
  /** Events with rv at or below this are out of the watch cache: watching from older is 410 Gone. */
  evictedRv: number;
  /** Pods by `spec.nodeName` (empty string for unscheduled pods). */
  readonly byNodeName = new Map<string, Set<string>>();

  constructor(readonly def: ResourceDefinition, startRv: number, capacity: number) {
    this.evictedRv = startRv;
    this.capacity = capacity;
  }
}

/** Sizing of the watch cache, as kube-apiserver's cacher sizes it per resource. */
export interface WatchCacheOptions {
  /** Fewest events kept (the cache never shrinks below). Default 100. */
  lowerBound?: number;
  /** Most events kept. Default 102400. */
  upperBound?: number;
  /** The cache grows (up to upperBound) rather than drop an event younger than this. Default 75 s. */
  eventFreshMs?: number;
}

/** Listener of committed changes. */
export type StoreListener = (event: StoreEvent) => void;

export interface StoreOptions {
  /** A fixed watch cache of this many events per resource (lower = upper bound), instead of the adaptive one. */
  historySize?: number;
  watchCache?: WatchCacheOptions;
  /** Clock of the watch cache's freshness rule (ms). */
  now?: () => number;
}

function nodeNameOf(obj: KubeObject): string {
  const nodeName = obj.spec?.['nodeName'];
  return typeof nodeName === 'string' ? nodeName : '';
}

/**
 * The in-memory stand-in for etcd: objects per resource keyed like `/registry/<resource>/<ns>/<name>`,
 * one global monotonically increasing resourceVersion, a bounded per-resource event history for
 * watches, an index of pods by node and of objects by owner uid. It stores what it is given:
 * validation and admission happen in the request layer. Stored objects are never mutated in place.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions
 */
export class ObjectStore {
  private rv = 1;
  private readonly tables = new Map<string, ResourceTable>();
  private readonly listeners = new Set<StoreListener>();
  private readonly queue: StoreEvent[] = [];
  private dispatching = false;
  private readonly lowerBound: number;
  private readonly upperBound: number;
  private readonly eventFreshMs: number;
  private readonly now: () => number;
  /** History at or below this resourceVersion is compacted away (as etcd compaction does). */
  private compactedRv = 0;
  /** owner uid -> `resourceId|key` of dependents, for garbage collection. */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly rvWaiters = new Set<{ rv: number; resolve: () => void }>();

  constructor(definitions: readonly ResourceDefinition[], options: StoreOptions = {}) {
    const fixed = options.historySize !== undefined ? Math.max(1, options.historySize) : undefined;
    this.lowerBound = fixed ?? Math.max(1, options.watchCache?.lowerBound ?? 100);
    this.upperBound = fixed ?? Math.max(this.lowerBound, options.watchCache?.upperBound ?? 102_400);
    this.eventFreshMs = options.watchCache?.eventFreshMs ?? 75_000;
    this.now = options.now ?? Date.now;
    for (const def of definitions) {
      this.tables.set(resourceId(def), new ResourceTable(def, this.rv, this.lowerBound));
    }
  }

  /** The oldest resourceVersion whose state a list (continue token, resourceVersionMatch=Exact) can still be served at. */
  get compactedResourceVersion(): number {
    return this.compactedRv;
  }

  /** The latest committed resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
  }

  /**
   * Starts serving a resource defined at run time (a CustomResourceDefinition's version), with an
   * empty table whose watch cache starts now; a resource already served is left as it is.
   */
  serve(def: ResourceDefinition): void {
    if (!this.tables.has(resourceId(def))) {
      this.tables.set(resourceId(def), new ResourceTable(def, this.rv, this.lowerBound));
    }
  }

  /** Every resource this store holds. */
  get definitions(): ResourceDefinition[] {
    return [...this.tables.values()].map((t) => t.def);
  }

  private table(def: ResourceDefinition): ResourceTable {
    const table = this.tables.get(resourceId(def));
    if (!table) {
      throw new Error(`resource ${resourceId(def)} is not stored`);
    }
    return table;
  }

  /** The stored object, or undefined. Treat it as read-only. */
  get(def: ResourceDefinition, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.table(def).objects.get(objectKey(def.namespaced ? namespace : undefined, name))?.obj;
  }

  /** JSON text of a stored object, cached until it changes. */
  json(def: ResourceDefinition, obj: KubeObject): string {
    const entry = this.table(def).objects.get(objectKey(obj.metadata.namespace, obj.metadata.name ?? ''));
    if (entry && entry.obj === obj) {
      entry.json ??= JSON.stringify(obj);
      return entry.json;
    }
    return JSON.stringify(obj);
  }

  /**
   * Objects of a resource in key order (namespace, then name), optionally in one namespace, only
   * on one node (pods, through the index), and starting after a key (pagination).
   */
  list(def: ResourceDefinition, filter: { namespace?: string; nodeName?: string; afterKey?: string } = {}): KubeObject[] {
    const table = this.table(def);
    let keys: string[];
    if (filter.nodeName !== undefined && def.resource === 'pods' && def.group === '') {
      keys = [...(table.byNodeName.get(filter.nodeName) ?? [])].sort();
    } else {
      table.sortedKeys ??= [...table.objects.keys()].sort();
      keys = table.sortedKeys;
    }
    let start = 0;
    if (filter.afterKey !== undefined) {
      const after = filter.afterKey;
      let lo = 0;
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (keys[mid] <= after) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      start = lo;
    }
    const prefix = def.namespaced && filter.namespace ? `${filter.namespace}/` : undefined;
    const out: KubeObject[] = [];
    for (let i = start; i < keys.length; i++) {
      const key = keys[i];
      if (prefix !== undefined && !key.startsWith(prefix)) {
        continue;
      }
      const entry = table.objects.get(key);
      if (entry) {
        out.push(entry.obj);
      }
    }
    return out;
  }

  /** Number of objects of a resource. */
  count(def: ResourceDefinition): number {
    return this.table(def).objects.size;
  }

  /** Stores a new object, assigning its resourceVersion, and reports ADDED. */
  insert(def: ResourceDefinition, obj: KubeObject): KubeObject {
    const table = this.table(def);
    const key = objectKey(def.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name ?? '');
    if (table.objects.has(key)) {
      throw new Error(`${key} already stored`);
    }
    const rv = ++this.rv;
    obj.metadata.resourceVersion = String(rv);
    table.objects.set(key, { obj });
    table.sortedKeys = undefined;
    this.index(table, key, undefined, obj);
    this.emit(table, { type: 'ADDED', resource: def, key, object: obj, rv });
    return obj;
  }

  /** Replaces a stored object, assigning a new resourceVersion, and reports MODIFIED. */
  replace(def: ResourceDefinition, obj: KubeObject): KubeObject {
    const table = this.table(def);
    const key = objectKey(def.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name ?? '');
    const previous = table.objects.get(key)?.obj;
    if (!previous) {
      throw new Error(`${key} is not stored`);
    }
    const rv = ++this.rv;
    obj.metadata.resourceVersion = String(rv);
    table.objects.set(key, { obj });
    this.index(table, key, previous, obj);
    this.emit(table, { type: 'MODIFIED', resource: def, key, object: obj, previous, rv });
    return obj;
  }

  /** Removes an object and reports DELETED with the object at a new resourceVersion. */
  remove(def: ResourceDefinition, namespace: string | undefined, name: string): KubeObject | undefined {
    const table = this.table(def);
    const key = objectKey(def.namespaced ? namespace : undefined, name);
    const previous = table.objects.get(key)?.obj;
    if (!previous) {
      return undefined;
    }
    const rv = ++this.rv;
    const last: KubeObject = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(rv) } };
    table.objects.delete(key);
    table.sortedKeys = undefined;
    this.index(table, key, previous, undefined);
    this.emit(table, { type: 'DELETED', resource: def, key, object: last, previous, rv });
    return last;
  }

  /** `resourceId|key` references of objects that name `uid` among their ownerReferences. */
  dependentsOf(uid: string): { def: ResourceDefinition; namespace?: string; name: string }[] {
    const refs = this.dependents.get(uid);
    if (!refs) {
      return [];
    }
    return [...refs].flatMap((ref) => {
      const [id, key] = ref.split('|');
      const table = this.tables.get(id);
      const obj = table?.objects.get(key)?.obj;
      return table && obj ? [{ def: table.def, namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' }] : [];
    });
  }

  private index(table: ResourceTable, key: string, before: KubeObject | undefined, after: KubeObject | undefined): void {
    if (table.def.resource === 'pods' && table.def.group === '') {
      const oldNode = before ? nodeNameOf(before) : undefined;
      const newNode = after ? nodeNameOf(after) : undefined;
      if (oldNode !== newNode) {
        if (oldNode !== undefined) {
          table.byNodeName.get(oldNode)?.delete(key);
        }
        if (newNode !== undefined) {
          let set = table.byNodeName.get(newNode);
          if (!set) {
            set = new Set();
            table.byNodeName.set(newNode, set);
          }
          set.add(key);
        }
      }
    }
    const ref = `${resourceId(table.def)}|${key}`;
    for (const owner of before?.metadata.ownerReferences ?? []) {
      this.dependents.get(owner.uid)?.delete(ref);
    }
    for (const owner of after?.metadata.ownerReferences ?? []) {
      let set = this.dependents.get(owner.uid);
      if (!set) {
        set = new Set();
        this.dependents.set(owner.uid, set);
      }
      set.add(ref);
    }
  }

  private emit(table: ResourceTable, event: StoreEvent): void {
    this.append(table, event);
    for (const waiter of [...this.rvWaiters]) {
      if (this.rv >= waiter.rv) {
        this.rvWaiters.delete(waiter);
        waiter.resolve();
      }
    }
    this.queue.push(event);
    if (this.dispatching) {
      return;
    }
    this.dispatching = true;
    try {
      for (let event = this.queue.shift(); event; event = this.queue.shift()) {
        for (const listener of [...this.listeners]) {
          listener(event);
        }
      }
    } finally {
      this.dispatching = false;
    }
  }

  /**
   * Appends to the resource's log and keeps the watch cache window the way the cacher does: when
   * full, it doubles (up to the upper bound) if its oldest event is still fresh, halves (down to the
   * lower bound) if even the newest quarter is stale, and otherwise drops its oldest event.
   * @see https://github.com/kubernetes/apiserver/blob/master/pkg/storage/cacher/watch_cache.go (resizeCacheLocked)
   */
  private append(table: ResourceTable, event: StoreEvent): void {
    const time = this.now();
    const size = table.log.length - table.windowStart;
    if (size >= table.capacity) {
      if (time - table.logTimes[table.windowStart] < this.eventFreshMs) {
        table.capacity = Math.min(table.capacity * 2, this.upperBound);
      } else if (time - table.logTimes[table.log.length - Math.max(1, Math.floor(table.capacity / 4))] > this.eventFreshMs) {
        table.capacity = Math.max(Math.floor(table.capacity / 2), this.lowerBound);
      }
      while (table.log.length - table.windowStart >= table.capacity) {
        table.evictedRv = table.log[table.windowStart].rv;
        table.windowStart++;
      }
    }
    table.log.push(event);
    table.logTimes.push(time);
    this.trim(table);
  }

  /** Forgets events that neither the watch cache nor an uncompacted list needs. */
  private trim(table: ResourceTable): void {
    let drop = 0;
    while (drop < table.windowStart && table.log[drop].rv <= this.compactedRv) {
      drop++;
    }
    if (drop > 1024 || (drop > 0 && drop === table.log.length)) {
      table.log = table.log.slice(drop);
      table.logTimes = table.logTimes.slice(drop);
      table.windowStart -= drop;
    }
  }

  /** Index of the first event of the log with rv above `rv`. */
  private firstAfter(table: ResourceTable, rv: number): number {
    let lo = 0;
    let hi = table.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (table.log[mid].rv <= rv) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * Events of a resource after `rv`, in order, or `undefined` when the watch cache no longer
   * reaches back that far (the caller answers 410 Gone).
   */
  eventsSince(def: ResourceDefinition, rv: number): StoreEvent[] | undefined {
    const table = this.table(def);
    if (rv < table.evictedRv) {
      return undefined;
    }
    return table.log.slice(Math.max(table.windowStart, this.firstAfter(table, rv)));
  }

  /** The oldest resourceVersion a watch of this resource may resume from. */
  oldestWatchable(def: ResourceDefinition): number {
    return this.table(def).evictedRv;
  }

  /**
   * Starts every resource's watch cache at the current resourceVersion, as an API server's cache
   * starts from its initial list: older resourceVersions are 410 Gone for watches.
   */
  startWatchCaches(): void {
    for (const table of this.tables.values()) {
      table.evictedRv = this.rv;
      table.windowStart = table.log.length;
      table.capacity = this.lowerBound;
    }
  }

  /** Compacts history up to `rv` (default: now), like etcd compaction: lists at older resourceVersions are 410 Gone. */
  compact(rv = this.rv): void {
    this.compactedRv = Math.max(this.compactedRv, Math.min(rv, this.rv));
    for (const table of this.tables.values()) {
      this.trim(table);
    }
  }

  /**
   * The objects of a resource as they were at `rv` (which must not be compacted), in key order,
   * filtered like {@link list}: the current objects with every change after `rv` undone.
   */
  listAt(def: ResourceDefinition, rv: number, filter: { namespace?: string; nodeName?: string; afterKey?: string } = {}): KubeObject[] {
    if (rv >= this.rv) {
      return this.list(def, filter);
    }
    const table = this.table(def);
    const before = new Map<string, KubeObject | undefined>();
    for (let i = this.firstAfter(table, rv); i < table.log.length; i++) {
      const event = table.log[i];
      if (!before.has(event.key)) {
        before.set(event.key, event.type === 'ADDED' ? undefined : event.previous);
      }
    }
    const current = this.list(def, filter);
    const prefix = def.namespaced && filter.namespace ? `${filter.namespace}/` : undefined;
    const merged = new Map<string, KubeObject>();
    for (const obj of current) {
      const key = objectKey(def.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name ?? '');
      if (!before.has(key)) {
        merged.set(key, obj);
      }
    }
    for (const [key, obj] of before) {
      if (obj && (prefix === undefined || key.startsWith(prefix)) && (filter.afterKey === undefined || key > filter.afterKey)) {
        merged.set(key, obj);
      }
    }
    return [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, obj]) => obj);
  }

  /** Resolves true once the store's resourceVersion reaches `rv`, false after `timeoutMs`. */
  waitForResourceVersion(rv: number, timeoutMs: number): Promise<boolean> {
    if (this.rv >= rv) {
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter = {
        rv,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.rvWaiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      this.rvWaiters.add(waiter);
    });
  }

  /** Subscribes to committed changes of every resource, delivered in commit order. */
  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
