import { badRequest, failureStatus, ApiError } from './api-error';
import { cloneJson, isJsonObject, jsonEqual, type JsonObject, type JsonValue } from './json-value';

/** Content types accepted for PATCH, in the order the real server lists them. */
export const PATCH_CONTENT_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
] as const;
export type PatchType = (typeof PATCH_CONTENT_TYPES)[number];

function patchFailure(message: string): ApiError {
  return new ApiError(failureStatus(422, 'Invalid', message));
}

/**
 * RFC 7386 JSON merge patch: objects merge recursively, `null` removes, everything else replaces.
 * @see https://www.rfc-editor.org/rfc/rfc7386
 */
export function applyMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) {
    return cloneJson(patch);
  }
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else {
      result[key] = applyMergePatch(result[key], value);
    }
  }
  return result;
}

function decodePointer(pointer: string): string[] {
  if (pointer === '') {
    return [];
  }
  if (!pointer.startsWith('/')) {
    throw patchFailure(`JSON pointer "${pointer}" must start with "/"`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = JsonObject | JsonValue[];

function resolveParent(doc: JsonValue, parts: string[], op: string): { parent: Container; key: string } {
  let current: JsonValue = doc;
  for (const part of parts.slice(0, -1)) {
    if (Array.isArray(current)) {
      current = current[Number(part)];
    } else if (isJsonObject(current)) {
      current = current[part];
    } else {
      current = null;
    }
    if (current === undefined || current === null || typeof current !== 'object') {
      throw patchFailure(`${op} operation does not apply: doc is missing path: "/${parts.join('/')}": missing value`);
    }
  }
  if (typeof current !== 'object' || current === null) {
    throw patchFailure(`${op} operation does not apply: doc is missing path: "/${parts.join('/')}": missing value`);
  }
  return { parent: current, key: parts[parts.length - 1] };
}

function arrayIndex(arr: JsonValue[], key: string, allowEnd: boolean, op: string): number {
  if (allowEnd && key === '-') {
    return arr.length;
  }
  if (!/^\d+$/.test(key)) {
    throw patchFailure(`${op} operation does not apply: invalid array index "${key}"`);
  }
  const index = Number(key);
  if (index > arr.length || (!allowEnd && index === arr.length)) {
    throw patchFailure(`${op} operation does not apply: index out of bounds: ${index}`);
  }
  return index;
}

function getAt(doc: JsonValue, pointer: string, op: string): JsonValue {
  const parts = decodePointer(pointer);
  if (parts.length === 0) {
    return doc;
  }
  const { parent, key } = resolveParent(doc, parts, op);
  const value = Array.isArray(parent) ? parent[arrayIndex(parent, key, false, op)] : parent[key];
  if (value === undefined) {
    throw patchFailure(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  }
  return value;
}

function removeAt(doc: JsonValue, pointer: string, op: string): JsonValue {
  const { parent, key } = resolveParent(doc, decodePointer(pointer), op);
  if (Array.isArray(parent)) {
    const [removed] = parent.splice(arrayIndex(parent, key, false, op), 1);
    return removed;
  }
  if (!(key in parent)) {
    throw patchFailure(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  }
  const removed = parent[key];
  delete parent[key];
  return removed;
}

function addAt(doc: JsonValue, pointer: string, value: JsonValue, op: string, replace: boolean): JsonValue {
  const parts = decodePointer(pointer);
  if (parts.length === 0) {
    return value;
  }
  const { parent, key } = resolveParent(doc, parts, op);
  if (Array.isArray(parent)) {
    const index = arrayIndex(parent, key, !replace, op);
    parent.splice(index, replace ? 1 : 0, value);
  } else {
    if (replace && !(key in parent)) {
      throw patchFailure(`${op} operation does not apply: doc is missing key: ${pointer}: missing value`);
    }
    parent[key] = value;
  }
  return doc;
}

/**
 * RFC 6902 JSON patch (add, remove, replace, move, copy, test).
 * @see https://www.rfc-editor.org/rfc/rfc6902
 */
export function applyJsonPatch(target: JsonValue, operations: JsonValue): JsonValue {
  if (!Array.isArray(operations)) {
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  let doc = cloneJson(target);
  for (const raw of operations) {
    if (!isJsonObject(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string') {
      throw patchFailure('Unexpected kind: operation is missing op or path');
    }
    const op = raw['op'];
    const path = raw['path'];
    const from = typeof raw['from'] === 'string' ? raw['from'] : undefined;
    switch (op) {
      case 'add':
        doc = addAt(doc, path, cloneJson(raw['value'] ?? null), op, false);
        break;
      case 'replace':
        doc = addAt(doc, path, cloneJson(raw['value'] ?? null), op, true);
        break;
      case 'remove':
        removeAt(doc, path, op);
        break;
      case 'move': {
        if (from === undefined) {
          throw patchFailure('move operation is missing "from"');
        }
        const value = removeAt(doc, from, op);
        doc = addAt(doc, path, value, op, false);
        break;
      }
      case 'copy': {
        if (from === undefined) {
          throw patchFailure('copy operation is missing "from"');
        }
        doc = addAt(doc, path, cloneJson(getAt(doc, from, op)), op, false);
        break;
      }
      case 'test': {
        const actual = getAt(doc, path, op);
        if (!jsonEqual(actual, raw['value'] ?? null)) {
          throw patchFailure(`testing value ${path} failed: test failed`);
        }
        break;
      }
      default:
        throw patchFailure(`Unexpected kind: ${op}`);
    }
  }
  return doc;
}

/** How a list field merges under a strategic merge patch (the Go struct tags `patchStrategy`/`patchMergeKey`). */
export interface ListStrategy {
  /** Key identifying list items (maps); absent for lists of primitives merged as sets. */
  mergeKey?: string;
  strategy: 'merge' | 'replace';
}

/**
 * Patch strategies of the built-in types, by path suffix (`[]` marks list items). Lists not named here
 * are replaced, like fields without a `patchStrategy` tag.
 * @see https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/#notes-on-the-strategic-merge-patch
 */
export const DEFAULT_LIST_STRATEGIES: Readonly<Record<string, ListStrategy>> = {
  'metadata.ownerReferences': { mergeKey: 'uid', strategy: 'merge' },
  'metadata.finalizers': { strategy: 'merge' },
  'spec.containers': { mergeKey: 'name', strategy: 'merge' },
  'spec.initContainers': { mergeKey: 'name', strategy: 'merge' },
  'spec.ephemeralContainers': { mergeKey: 'name', strategy: 'merge' },
  'containers[].ports': { mergeKey: 'containerPort', strategy: 'merge' },
  'initContainers[].ports': { mergeKey: 'containerPort', strategy: 'merge' },
  'containers[].env': { mergeKey: 'name', strategy: 'merge' },
  'initContainers[].env': { mergeKey: 'name', strategy: 'merge' },
  'containers[].volumeMounts': { mergeKey: 'mountPath', strategy: 'merge' },
  'initContainers[].volumeMounts': { mergeKey: 'mountPath', strategy: 'merge' },
  'containers[].volumeDevices': { mergeKey: 'devicePath', strategy: 'merge' },
  'spec.volumes': { mergeKey: 'name', strategy: 'merge' },
  'spec.imagePullSecrets': { mergeKey: 'name', strategy: 'merge' },
  'spec.hostAliases': { mergeKey: 'ip', strategy: 'merge' },
  'spec.podCIDRs': { strategy: 'merge' },
  'spec.ports': { mergeKey: 'port', strategy: 'merge' },
  'status.conditions': { mergeKey: 'type', strategy: 'merge' },
  'status.addresses': { mergeKey: 'type', strategy: 'merge' },
  'status.podIPs': { mergeKey: 'ip', strategy: 'merge' },
  'status.hostIPs': { mergeKey: 'ip', strategy: 'merge' },
};

function strategyFor(path: string, strategies: Readonly<Record<string, ListStrategy>>): ListStrategy | undefined {
  let best: string | undefined;
  for (const pattern of Object.keys(strategies)) {
    if ((path === pattern || path.endsWith(`.${pattern}`)) && (best === undefined || pattern.length > best.length)) {
      best = pattern;
    }
  }
  return best === undefined ? undefined : strategies[best];
}

const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

function mergeList(original: JsonValue | undefined, patch: JsonValue[], strategy: ListStrategy, path: string, strategies: Readonly<Record<string, ListStrategy>>): JsonValue[] {
  if (patch.some((item) => isJsonObject(item) && item['$patch'] === 'replace')) {
    return patch.filter((item) => !(isJsonObject(item) && item['$patch'] === 'replace')).map((item) => cloneJson(item));
  }
  const base: JsonValue[] = Array.isArray(original) ? original.map((item) => cloneJson(item)) : [];
  const mergeKey = strategy.mergeKey;
  if (mergeKey === undefined) {
    for (const item of patch) {
      if (!base.some((existing) => jsonEqual(existing, item))) {
        base.push(cloneJson(item));
      }
    }
    return base;
  }
  let result = base;
  for (const item of patch) {
    if (!isJsonObject(item)) {
      throw badRequest(`unable to find api field in struct for the list of maps at ${path}`);
    }
    const keyValue = item[mergeKey];
    if (keyValue === undefined) {
      throw badRequest(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    }
    const index = result.findIndex((existing) => isJsonObject(existing) && jsonEqual(existing[mergeKey], keyValue));
    if (item['$patch'] === 'delete') {
      result = result.filter((existing) => !(isJsonObject(existing) && jsonEqual(existing[mergeKey], keyValue)));
    } else if (index >= 0) {
      const merged = mergeMap(result[index] as JsonObject, item, `${path}[]`, strategies);
      if (merged !== undefined) {
        result[index] = merged;
      }
    } else {
      const added = mergeMap({}, item, `${path}[]`, strategies);
      if (added !== undefined) {
        result.push(added);
      }
    }
  }
  return result;
}

function mergeMap(original: JsonObject, patch: JsonObject, path: string, strategies: Readonly<Record<string, ListStrategy>>): JsonObject | undefined {
  const directive = patch['$patch'];
  if (directive === 'delete') {
    return undefined;
  }
  if (directive === 'replace') {
    const replaced = cloneJson(patch);
    delete replaced['$patch'];
    return replaced;
  }
  const result: JsonObject = { ...original };
  for (const [key, value] of Object.entries(patch)) {
    const childPath = path ? `${path}.${key}` : key;
    if (key === '$patch' || key === '$retainKeys' || key.startsWith(SET_ELEMENT_ORDER)) {
      continue;
    }
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE_LIST.length);
      const current = result[field];
      if (!Array.isArray(value)) {
        throw badRequest('invalid patch: $deleteFromPrimitiveList must be a list');
      }
      if (Array.isArray(current)) {
        result[field] = current.filter((item) => !value.some((v) => jsonEqual(v, item)));
      }
      continue;
    }
    if (value === null) {
      delete result[key];
      continue;
    }
    const current = result[key];
    if (isJsonObject(value)) {
      const merged = mergeMap(isJsonObject(current) ? current : {}, value, childPath, strategies);
      if (merged === undefined) {
        delete result[key];
      } else {
        result[key] = merged;
      }
    } else if (Array.isArray(value)) {
      const strategy = strategyFor(childPath, strategies);
      result[key] = strategy?.strategy === 'merge' ? mergeList(current, value, strategy, childPath, strategies) : cloneJson(value);
    } else {
      result[key] = value;
    }
  }
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result)) {
      if (!retain.includes(key)) {
        delete result[key];
      }
    }
  }
  return result;
}

/**
 * Kubernetes strategic merge patch: like a merge patch, but lists with a merge key merge item by
 * item, and the `$patch`, `$retainKeys`, `$deleteFromPrimitiveList` directives are honoured.
 * @see https://github.com/kubernetes/community/blob/master/contributors/devel/sig-api-machinery/strategic-merge-patch.md
 */
export function applyStrategicMergePatch(
  target: JsonObject,
  patch: JsonValue,
  strategies: Readonly<Record<string, ListStrategy>> = DEFAULT_LIST_STRATEGIES,
): JsonObject {
  if (!isJsonObject(patch)) {
    throw badRequest('unable to apply strategic merge patch: patch is not a JSON object');
  }
  return mergeMap(target, patch, '', strategies) ?? {};
}

/** Applies a PATCH body of the given content type to an object. */
export function applyPatch(type: PatchType, target: JsonObject, patch: JsonValue, strategies?: Readonly<Record<string, ListStrategy>>): JsonValue {
  switch (type) {
    case 'application/json-patch+json':
      return applyJsonPatch(target, patch);
    case 'application/merge-patch+json':
      return applyMergePatch(target, patch);
    case 'application/strategic-merge-patch+json':
      return applyStrategicMergePatch(target, patch, strategies);
  }
}
