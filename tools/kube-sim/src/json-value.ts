/** JSON values as they travel over the Kubernetes API, and the few operations the simulator needs on them. */
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** True for plain JSON objects (not arrays, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep copy through JSON: every stored object is plain JSON, so this is exact and fast. */
export function cloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Structural equality of two JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) {
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const aKeys = Object.keys(a).filter((k) => a[k] !== undefined);
    const bKeys = Object.keys(b).filter((k) => b[k] !== undefined);
    return aKeys.length === bKeys.length && aKeys.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

/** Reads a dotted path (`spec.nodeName`) from an object; undefined when any step is missing. */
export function readPath(value: unknown, path: readonly string[]): unknown {
  let current: unknown = value;
  for (const step of path) {
    if (!isJsonObject(current)) {
      return undefined;
    }
    current = current[step];
  }
  return current;
}
