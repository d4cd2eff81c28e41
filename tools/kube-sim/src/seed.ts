import { parseAllDocuments } from 'yaml';
import { isJsonObject } from './json-value';
import type { KubeObject } from './kube-object';
import type { ObjectApi } from './object-api';
import { resourceForKind } from './resource-registry';

/** Seed input: multi-document YAML (or JSON) text, or objects. */
export type SeedInput = string | readonly KubeObject[];

function flatten(docs: readonly unknown[]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of docs) {
    if (!isJsonObject(doc)) {
      continue;
    }
    if (typeof doc['kind'] === 'string' && doc['kind'].endsWith('List') && Array.isArray(doc['items'])) {
      out.push(...flatten(doc['items']));
    } else {
      out.push(doc as unknown as KubeObject);
    }
  }
  return out;
}

/**
 * Parses seed text: ordinary multi-document Kubernetes YAML, `List` documents flattened.
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/object-management/
 */
export function parseSeed(input: SeedInput): KubeObject[] {
  if (typeof input !== 'string') {
    return flatten(input);
  }
  const docs = parseAllDocuments(input);
  const values: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      throw new Error(`seed: ${doc.errors[0].message}`);
    }
    values.push(doc.toJSON());
  }
  return flatten(values);
}

/**
 * Stores seed objects as written (uids, ownerReferences, status kept; defaults applied; missing
 * namespaces created), namespaces first. Unknown kinds are an error.
 */
export function loadSeed(api: ObjectApi, input: SeedInput): KubeObject[] {
  const objects = parseSeed(input);
  const definitions = api.store.definitions;
  const resolved = objects.map((obj) => {
    const def = resourceForKind(String(obj.apiVersion ?? ''), String(obj.kind ?? ''), definitions);
    if (!def) {
      throw new Error(`seed: kind ${String(obj.kind)} of apiVersion ${String(obj.apiVersion)} is not served by kube-sim`);
    }
    if (!isJsonObject(obj.metadata)) {
      throw new Error(`seed: a ${def.kind} has no metadata`);
    }
    return { def, obj };
  });
  resolved.sort((a, b) => Number(b.def.resource === 'namespaces') - Number(a.def.resource === 'namespaces'));
  return resolved.map(({ def, obj }) => {
    if (def.resource === 'namespaces' && api.store.get(def, undefined, obj.metadata.name ?? '')) {
      return api.store.get(def, undefined, obj.metadata.name ?? '') as KubeObject;
    }
    return api.seed(def, obj);
  });
}
