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
  readonly history: StoreEvent[] = [];
  historyHead = 0;
  /** Events with rv at or below this were dropped from history: watching from older is 410 Gone. */
  evictedRv: number;
  /** Pods by `spec.nodeName` (empty string for unscheduled pods). */
  readonly byNodeName = new Map<string, Set<string>>();

  constructor(readonly def: ResourceDefinition, startRv: number) {
    this.evictedRv = startRv;
  }
}

/** Listener of committed changes. */
export type StoreListener = (event: StoreEvent) => void;

export interface StoreOptions {
  /** Events kept per resource for watches that resume from a resourceVersion (the watch cache). */
  historySize?: number;
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
  private readonly historySize: number;
  /** owner uid -> `resourceId|key` of dependents, for garbage collection. */
  private readonly dependents = new Map<string, Set<string>>();

  constructor(definitions: readonly ResourceDefinition[], options: StoreOptions = {}) {
    this.historySize = Math.max(1, options.historySize ?? 5000);
    for (const def of definitions) {
      this.tables.set(resourceId(def), new ResourceTable(def, this.rv));
    }
  }

  /** The latest committed resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
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
    if (table.history.length < this.historySize) {
      table.history.push(event);
    } else {
      table.evictedRv = table.history[table.historyHead].rv;
      table.history[table.historyHead] = event;
      table.historyHead = (table.historyHead + 1) % this.historySize;
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
   * Events of a resource after `rv`, in order, or `undefined` when history no longer reaches back
   * that far (the caller answers 410 Gone).
   */
  eventsSince(def: ResourceDefinition, rv: number): StoreEvent[] | undefined {
    const table = this.table(def);
    if (rv < table.evictedRv) {
      return undefined;
    }
    const ordered = [...table.history.slice(table.historyHead), ...table.history.slice(0, table.historyHead)];
    return ordered.filter((e) => e.rv > rv);
  }

  /** The oldest resourceVersion a watch of this resource may resume from. */
  oldestWatchable(def: ResourceDefinition): number {
    return this.table(def).evictedRv;
  }

  /** Subscribes to committed changes of every resource, delivered in commit order. */
  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
