import type { JsonObject } from './json-value';

/** `metadata.ownerReferences[]` entry. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The part of ObjectMeta the simulator reads or maintains. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [key: string]: unknown;
}

/** Any Kubernetes object as stored: plain JSON with a metadata block. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: JsonObject;
  status?: JsonObject;
  [key: string]: unknown;
}

/**
 * Storage key of an object: `namespace/name` for namespaced objects, `name` otherwise.
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/names/
 */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** RFC 3339 timestamp with second precision, as Kubernetes writes `metav1.Time`; `at` is a Date or epoch milliseconds (the simulator's clock). */
export function kubeTime(at: Date | number): string {
  return `${new Date(at).toISOString().slice(0, 19)}Z`;
}

/** The owner reference with `controller: true`, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}
