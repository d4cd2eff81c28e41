import type { FieldError } from './api-error';
import type { KubeObject } from './kube-object';
import type { ListStrategy } from './patch';
import type { FieldGetter } from './selectors';
import type { UserInfo } from './user-info';

/** What a resource's strategy may look at while preparing or validating a write. */
export interface StrategyContext {
  user: UserInfo;
  now: Date;
}

/** How a writable subresource (`status`, `approval`) turns an incoming object into the stored one. */
export interface SubresourceWrite {
  /** Returns the object to store: the old object with only the fields this subresource may change taken from `incoming`. */
  merge(incoming: KubeObject, old: KubeObject, ctx: StrategyContext): KubeObject;
  validate?(obj: KubeObject, old: KubeObject): FieldError[];
}

/**
 * Per-resource rules of the real registry strategies (pkg/registry/<group>/<resource>/strategy.go):
 * defaults, fields dropped on create/update, validation, graceful deletion.
 */
export interface ResourceStrategy {
  /** Defaulting applied to every stored object, seeds included (pkg/apis/<group>/v1/defaults.go). */
  defaults?(obj: KubeObject): void;
  prepareForCreate?(obj: KubeObject, ctx: StrategyContext): void;
  validateCreate?(obj: KubeObject): FieldError[];
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /** Seconds until a graceful delete completes; 0 deletes at once. Only pods have one. */
  deletionGracePeriod?(obj: KubeObject, requested: number | undefined): number;
  subresourceWrites?: Readonly<Record<string, SubresourceWrite>>;
  listStrategies?: Readonly<Record<string, ListStrategy>>;
}

/** A subresource as listed in discovery. */
export interface SubresourceDefinition {
  name: string;
  kind: string;
  verbs: readonly string[];
  /** Group/version of the subresource's kind when it differs (pods/eviction is policy/v1 Eviction). */
  group?: string;
  version?: string;
}

/** One served resource: discovery data, selectors, strategy. */
export interface ResourceDefinition {
  group: string;
  version: string;
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  verbs: readonly string[];
  subresources: readonly SubresourceDefinition[];
  fieldLabels: Readonly<Record<string, FieldGetter>>;
  /** Whether `metadata.generation` is maintained (spec changes bump it). */
  tracksGeneration: boolean;
  strategy: ResourceStrategy;
}

/** `v1` or `apps/v1`. */
export function apiVersionOf(def: Pick<ResourceDefinition, 'group' | 'version'>): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** Stable identifier of a resource: `apps/v1/deployments`, `v1/pods`. */
export function resourceId(def: Pick<ResourceDefinition, 'group' | 'version' | 'resource'>): string {
  return `${apiVersionOf(def)}/${def.resource}`;
}
