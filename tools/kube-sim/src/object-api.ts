import { randomUUID } from 'node:crypto';
import type { AdmissionPlugin, AdmissionRequest } from './admission';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  failureStatus,
  forbidden,
  invalid,
  notFound,
  type ErrorSubject,
  type FieldError,
} from './api-error';
import { SYSTEM_CLOCK, type KubeSimClock } from './clock';
import { cloneJson, isJsonObject, jsonEqual, type JsonValue } from './json-value';
import { kubeTime, objectKey, type KubeObject } from './kube-object';
import { DEFAULT_LIST_STRATEGIES, applyPatch, type PatchType } from './patch';
import { apiVersionOf, type ResourceDefinition, type StrategyContext } from './resource-definition';
import { findResource } from './resource-registry';
import { UNDELETABLE_NAMESPACES } from './resources/namespaces';
import type { ObjectStore } from './store';
import { decodeTimes } from './time-fields';
import type { UserInfo } from './user-info';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Options of a write, from the query string or DeleteOptions. */
export interface WriteOptions {
  user: UserInfo;
  dryRun?: boolean;
}

/** `DeleteOptions` the simulator honours. */
export interface DeleteOptions extends WriteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
}

/** The Status/details subject of an object. */
export function subjectOf(def: ResourceDefinition, name?: string): ErrorSubject {
  return { resource: def.resource, group: def.group, kind: def.kind, name };
}

function generatedName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) {
    suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  }
  return `${prefix}${suffix}`;
}

/** Rebuilds an object with `apiVersion` and `kind` first, the way the API server serializes it. */
export function normalizeObject(def: ResourceDefinition, obj: KubeObject): KubeObject {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = obj;
  return { apiVersion: apiVersionOf(def), kind: def.kind, metadata: { ...metadata }, ...rest };
}

function withoutVersion(obj: KubeObject): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: undefined } };
}

/**
 * The generic registry of the API server (k8s.io/apiserver/pkg/registry/generic/registry): create,
 * update, patch and delete with strategies, optimistic concurrency on resourceVersion, graceful
 * deletion and finalizers, namespace lifecycle admission and owner-reference garbage collection.
 * HTTP-agnostic: the server and the tests call it alike.
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions
 */
export class ObjectApi {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Validating admission plugins, run in order before every create, update and delete. */
  readonly admission: AdmissionPlugin[] = [];

  /** @param clock what creation and deletion timestamps are stamped with, and grace periods judged by. */
  constructor(
    readonly store: ObjectStore,
    readonly clock: KubeSimClock = SYSTEM_CLOCK,
  ) {}

  /** Runs the admission plugins; the first refusal is thrown. */
  admit(request: AdmissionRequest): void {
    for (const plugin of this.admission) {
      plugin(request);
    }
  }

  /** Looks a served resource up. */
  resource(group: string, version: string, resource: string): ResourceDefinition {
    return findResource(group, version, resource, this.store.definitions);
  }

  /** A stored object or 404. */
  get(def: ResourceDefinition, namespace: string | undefined, name: string): KubeObject {
    const obj = this.store.get(def, namespace, name);
    if (!obj) {
      throw notFound(subjectOf(def, name));
    }
    return obj;
  }

  private context(user: UserInfo): StrategyContext {
    return { user, now: new Date(this.clock.now()) };
  }

  private validateName(def: ResourceDefinition, name: string): FieldError[] {
    if (def.group === 'rbac.authorization.k8s.io') {
      // RBAC names only have to be path segments (ValidateRBACName), so `system:node` is valid.
      const problem = name === '.' || name === '..' ? `may not be '${name}'` : name.includes('/') ? "may not contain '/'" : name.includes('%') ? "may not contain '%'" : undefined;
      return problem ? [{ type: 'Invalid', field: 'metadata.name', value: name, detail: problem }] : [];
    }
    const pattern = def.resource === 'namespaces' ? DNS_LABEL : DNS_SUBDOMAIN;
    if (name.length > 253 || !pattern.test(name)) {
      const detail =
        def.resource === 'namespaces'
          ? "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
          : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
      return [{ type: 'Invalid', field: 'metadata.name', value: name, detail }];
    }
    return [];
  }

  /** NamespaceLifecycle admission: the namespace must exist and not be terminating. */
  private admitNamespace(def: ResourceDefinition, namespace: string | undefined): void {
    if (!def.namespaced) {
      return;
    }
    const nsDef = this.resource('', 'v1', 'namespaces');
    const ns = this.store.get(nsDef, undefined, namespace ?? '');
    if (!ns) {
      throw notFound({ resource: 'namespaces', group: '', name: namespace });
    }
    if (ns.metadata.deletionTimestamp) {
      throw new ApiError(
        failureStatus(403, 'Forbidden', `unable to create new content in namespace ${namespace ?? ''} because it is being terminated`, {
          name: namespace ?? '',
          kind: 'namespaces',
          causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace ?? ''} is being terminated`, field: 'metadata.namespace' }],
        }),
      );
    }
  }

  private checkBody(def: ResourceDefinition, body: unknown, namespace: string | undefined): KubeObject {
    if (!isJsonObject(body)) {
      throw badRequest(`the body of the request was not a JSON object`);
    }
    const obj = cloneJson(body) as unknown as KubeObject;
    if (!isJsonObject(obj.metadata)) {
      obj.metadata = {};
    }
    if ((obj.kind !== undefined && obj.kind !== def.kind) || (obj.apiVersion !== undefined && obj.apiVersion !== apiVersionOf(def))) {
      throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersionOf(def)}) or kind ${String(obj.kind)} is not ${def.kind}`);
    }
    if (def.namespaced) {
      if (obj.metadata.namespace && namespace && obj.metadata.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      obj.metadata.namespace = namespace ?? obj.metadata.namespace;
    } else {
      delete obj.metadata.namespace;
    }
    const normalized = normalizeObject(def, obj);
    decodeTimes(def, normalized);
    return normalized;
  }

  /** POST: creates an object (201). */
  create(def: ResourceDefinition, namespace: string | undefined, body: unknown, options: WriteOptions): KubeObject {
    const obj = this.checkBody(def, body, namespace);
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) {
      // kube-apiserver tries up to 8 generated names before it answers AlreadyExists (RetryGenerateName, on by default since 1.31).
      meta.name = generatedName(meta.generateName);
      for (let attempt = 1; attempt < 8 && this.store.get(def, meta.namespace, meta.name); attempt++) {
        meta.name = generatedName(meta.generateName);
      }
    }
    if (!meta.name) {
      throw invalid(subjectOf(def, ''), [{ type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' }]);
    }
    meta.uid = randomUUID();
    meta.creationTimestamp = kubeTime(this.clock.now());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta['selfLink'];
    if (def.tracksGeneration) {
      meta.generation = 1;
    } else {
      delete meta.generation;
    }
    def.strategy.defaults?.(obj);
    def.strategy.prepareForCreate?.(obj, this.context(options.user));
    const errors = [...this.validateName(def, meta.name), ...(def.strategy.validateCreate?.(obj) ?? [])];
    if (errors.length > 0) {
      throw invalid(subjectOf(def, meta.name), errors);
    }
    this.admitNamespace(def, meta.namespace);
    this.admit({ operation: 'CREATE', def, subresource: '', namespace: meta.namespace ?? '', name: meta.name, object: obj, user: options.user, dryRun: options.dryRun === true });
    if (this.store.get(def, meta.namespace, meta.name)) {
      throw alreadyExists(subjectOf(def, meta.name));
    }
    if (options.dryRun) {
      return obj;
    }
    return this.store.insert(def, obj);
  }

  /**
   * Stores an object as written (seed files, test fixtures): metadata such as uid, ownerReferences and
   * status kept, only missing uid/creationTimestamp/namespace filled and defaults applied. Creates a
   * missing namespace.
   */
  seed(def: ResourceDefinition, body: KubeObject): KubeObject {
    const obj = normalizeObject(def, cloneJson(body));
    decodeTimes(def, obj);
    const meta = obj.metadata;
    if (!meta.name) {
      throw new Error(`seed ${def.kind} has no metadata.name`);
    }
    if (def.namespaced) {
      meta.namespace ??= 'default';
      const nsDef = this.resource('', 'v1', 'namespaces');
      if (!this.store.get(nsDef, undefined, meta.namespace)) {
        this.seed(nsDef, { metadata: { name: meta.namespace } });
      }
    } else {
      delete meta.namespace;
    }
    meta.uid ??= randomUUID();
    meta.creationTimestamp ??= kubeTime(this.clock.now());
    delete meta.resourceVersion;
    if (def.tracksGeneration) {
      meta.generation ??= 1;
    }
    def.strategy.defaults?.(obj);
    if (this.store.get(def, meta.namespace, meta.name)) {
      throw alreadyExists(subjectOf(def, meta.name));
    }
    return this.store.insert(def, obj);
  }

  /** PUT on the object or a writable subresource (`status`, `approval`). */
  update(def: ResourceDefinition, namespace: string | undefined, name: string, body: unknown, options: WriteOptions & { subresource?: string }): KubeObject {
    const incoming = this.checkBody(def, body, namespace);
    if (incoming.metadata.name !== undefined && incoming.metadata.name !== name) {
      throw badRequest(`the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`);
    }
    incoming.metadata.name = name;
    const current = this.store.get(def, namespace, name);
    if (!current) {
      if (!options.subresource && (def.resource === 'leases' || def.resource === 'events')) {
        return this.create(def, namespace, incoming, options);
      }
      throw notFound(subjectOf(def, name));
    }
    const rv = incoming.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion) {
      throw conflict(subjectOf(def, name));
    }
    return this.commitUpdate(def, current, incoming, options);
  }

  private commitUpdate(def: ResourceDefinition, current: KubeObject, incoming: KubeObject, options: WriteOptions & { subresource?: string }): KubeObject {
    let candidate: KubeObject;
    let errors: FieldError[];
    if (options.subresource) {
      const write = def.strategy.subresourceWrites?.[options.subresource];
      if (!write) {
        throw new ApiError(failureStatus(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, {}));
      }
      candidate = normalizeObject(def, write.merge(incoming, current, this.context(options.user)));
      errors = write.validate?.(candidate, current) ?? [];
    } else {
      candidate = incoming;
      const meta = candidate.metadata;
      meta.uid = current.metadata.uid;
      meta.creationTimestamp = current.metadata.creationTimestamp;
      meta.deletionTimestamp = current.metadata.deletionTimestamp;
      meta.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
      meta.generation = current.metadata.generation;
      for (const key of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
        if (meta[key] === undefined) {
          delete meta[key];
        }
      }
      def.strategy.defaults?.(candidate);
      def.strategy.prepareForUpdate?.(candidate, current);
      if (def.tracksGeneration && !jsonEqual(candidate.spec, current.spec)) {
        meta.generation = (current.metadata.generation ?? 0) + 1;
      }
      errors = def.strategy.validateUpdate?.(candidate, current) ?? [];
    }
    if (errors.length > 0) {
      throw invalid(subjectOf(def, current.metadata.name), errors);
    }
    if (jsonEqual(withoutVersion(candidate), withoutVersion(current))) {
      return current;
    }
    this.admit({
      operation: 'UPDATE',
      def,
      subresource: options.subresource ?? '',
      namespace: current.metadata.namespace ?? '',
      name: current.metadata.name ?? '',
      object: candidate,
      oldObject: current,
      user: options.user,
      dryRun: options.dryRun === true,
    });
    if (options.dryRun) {
      return candidate;
    }
    candidate.metadata.resourceVersion = current.metadata.resourceVersion;
    const stored = this.store.replace(def, candidate);
    if (stored.metadata.deletionTimestamp && (stored.metadata.finalizers ?? []).length === 0 && Date.parse(stored.metadata.deletionTimestamp) <= this.clock.now()) {
      this.finishDeletion(def, stored);
    }
    return stored;
  }

  /** PATCH (json, merge or strategic merge) on the object or a subresource. */
  patch(def: ResourceDefinition, namespace: string | undefined, name: string, type: PatchType, body: JsonValue, options: WriteOptions & { subresource?: string }): KubeObject {
    const current = this.get(def, namespace, name);
    const strategies = { ...DEFAULT_LIST_STRATEGIES, ...def.strategy.listStrategies };
    const patched = applyPatch(type, cloneJson(current) as unknown as Record<string, JsonValue>, body, strategies);
    if (!isJsonObject(patched)) {
      throw badRequest('the patched object is not a JSON object');
    }
    const obj = patched as unknown as KubeObject;
    if (!isJsonObject(obj.metadata)) {
      obj.metadata = {};
    }
    if (obj.metadata.name !== name) {
      throw invalid(subjectOf(def, name), [{ type: 'Invalid', field: 'metadata.name', value: obj.metadata.name, detail: 'field is immutable' }]);
    }
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== current.metadata.resourceVersion) {
      throw conflict(subjectOf(def, name));
    }
    const incoming = this.checkBody(def, obj, namespace);
    return this.commitUpdate(def, current, incoming, options);
  }

  /** DELETE of one object: graceful for pods, deferred by finalizers, cascading to dependents. */
  delete(def: ResourceDefinition, namespace: string | undefined, name: string, options: DeleteOptions): KubeObject {
    const current = this.get(def, namespace, name);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw conflict(subjectOf(def, name), `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        subjectOf(def, name),
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
      );
    }
    if (def.resource === 'namespaces' && def.group === '' && UNDELETABLE_NAMESPACES.includes(name)) {
      throw forbidden(subjectOf(def, name), 'this namespace may not be deleted');
    }
    if (options.gracePeriodSeconds !== undefined && options.gracePeriodSeconds < 0) {
      throw invalid(subjectOf(def, name), [{ type: 'Invalid', field: 'gracePeriodSeconds', value: options.gracePeriodSeconds, detail: 'must be greater than or equal to 0' }]);
    }
    const grace = def.strategy.deletionGracePeriod?.(current, options.gracePeriodSeconds) ?? 0;
    const finalizers = current.metadata.finalizers ?? [];
    this.admit({ operation: 'DELETE', def, subresource: '', namespace: current.metadata.namespace ?? '', name, oldObject: current, user: options.user, dryRun: options.dryRun === true });
    if (options.dryRun) {
      return current;
    }
    if (current.metadata.deletionTimestamp) {
      // Already being deleted: a second delete may only shorten the grace period.
      const remaining = Math.max(0, (Date.parse(current.metadata.deletionTimestamp) - this.clock.now()) / 1000);
      if (grace >= remaining && (remaining > 0 || finalizers.length > 0)) {
        return current;
      }
    }
    if (grace > 0 || finalizers.length > 0) {
      const updated = cloneJson(current);
      updated.metadata.deletionTimestamp = kubeTime(this.clock.now() + grace * 1000);
      updated.metadata.deletionGracePeriodSeconds = grace;
      if (def.tracksGeneration) {
        updated.metadata.generation = (current.metadata.generation ?? 0) + 1;
      }
      const stored = this.store.replace(def, updated);
      if (grace > 0) {
        this.schedule(def, stored, grace * 1000, options.propagationPolicy);
      } else {
        this.cancel(def, stored);
      }
      return stored;
    }
    return this.finishDeletion(def, current, options.propagationPolicy);
  }

  /** DELETE on a collection: deletes every object the selectors keep, returns them. */
  deleteCollection(def: ResourceDefinition, objects: readonly KubeObject[], options: DeleteOptions): KubeObject[] {
    return objects.flatMap((obj) => {
      try {
        return [this.delete(def, obj.metadata.namespace, obj.metadata.name ?? '', options)];
      } catch (error) {
        if (error instanceof ApiError && error.status.code === 404) {
          return [];
        }
        throw error;
      }
    });
  }

  private timerKey(def: ResourceDefinition, obj: KubeObject): string {
    return `${def.group}/${def.resource}/${objectKey(obj.metadata.namespace, obj.metadata.name ?? '')}`;
  }

  private cancel(def: ResourceDefinition, obj: KubeObject): void {
    const key = this.timerKey(def, obj);
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }

  private schedule(def: ResourceDefinition, obj: KubeObject, delayMs: number, policy: DeleteOptions['propagationPolicy']): void {
    this.cancel(def, obj);
    const key = this.timerKey(def, obj);
    const uid = obj.metadata.uid;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      const latest = this.store.get(def, obj.metadata.namespace, obj.metadata.name ?? '');
      if (latest && latest.metadata.uid === uid && latest.metadata.deletionTimestamp && (latest.metadata.finalizers ?? []).length === 0) {
        this.finishDeletion(def, latest, policy);
      }
    }, delayMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  /** Removes an object for good and lets the garbage collector handle its dependents. */
  private finishDeletion(def: ResourceDefinition, obj: KubeObject, policy?: DeleteOptions['propagationPolicy']): KubeObject {
    this.cancel(def, obj);
    if (def.resource === 'namespaces' && def.group === '') {
      this.emptyNamespace(obj.metadata.name ?? '');
    }
    const last = this.store.remove(def, obj.metadata.namespace, obj.metadata.name ?? '') ?? obj;
    const uid = obj.metadata.uid;
    if (uid) {
      this.collectDependents(uid, policy ?? 'Background');
    }
    return last;
  }

  private emptyNamespace(namespace: string): void {
    for (const def of this.store.definitions.filter((d) => d.namespaced)) {
      for (const obj of this.store.list(def, { namespace })) {
        this.cancel(def, obj);
        this.store.remove(def, namespace, obj.metadata.name ?? '');
      }
    }
  }

  /**
   * The garbage collector's part: dependents whose owners are all gone are deleted (Background and
   * Foreground alike, synchronously), or just lose the reference (Orphan, or other owners remain).
   * @see https://kubernetes.io/docs/concepts/architecture/garbage-collection/
   */
  private collectDependents(uid: string, policy: NonNullable<DeleteOptions['propagationPolicy']>): void {
    const admin: UserInfo = { username: 'system:serviceaccount:kube-system:generic-garbage-collector', groups: ['system:serviceaccounts'] };
    for (const dep of this.store.dependentsOf(uid)) {
      const obj = this.store.get(dep.def, dep.namespace, dep.name);
      if (!obj) {
        continue;
      }
      const remaining = (obj.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid);
      const othersAlive = remaining.some((ref) => this.ownerExists(ref.uid));
      if (policy === 'Orphan' || othersAlive) {
        const updated = cloneJson(obj);
        updated.metadata.ownerReferences = remaining;
        if (remaining.length === 0) {
          delete updated.metadata.ownerReferences;
        }
        this.store.replace(dep.def, updated);
      } else {
        try {
          this.delete(dep.def, dep.namespace, dep.name, { user: admin, propagationPolicy: 'Background' });
        } catch (error) {
          if (!(error instanceof ApiError)) {
            throw error;
          }
        }
      }
    }
  }

  private ownerExists(uid: string): boolean {
    return this.store.definitions.some((def) => this.store.list(def).some((o) => o.metadata.uid === uid));
  }

  /** Cancels pending graceful deletions (server shutdown). */
  stop(): void {
    for (const timer of this.timers.values()) {
      clearTimeout(timer);
    }
    this.timers.clear();
  }
}
