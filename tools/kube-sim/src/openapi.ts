import { createHash } from 'node:crypto';
import type { JsonObject } from './json-value';
import type { ResourceDefinition } from './resource-definition';

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

const QUERY_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation'].map((name) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } }));

function operation(def: ResourceDefinition, action: string): JsonObject {
  return {
    operationId: `${action}${def.kind}`,
    parameters: action === 'get' || action === 'delete' ? [] : QUERY_PARAMS,
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: def.group, version: def.version, kind: def.kind },
  };
}

/**
 * The OpenAPI v3 document of one group version, reduced to what clients probe: the paths of every
 * resource with their operations, GVK extension and `fieldValidation`/`dryRun` query parameters (kubectl
 * create/apply check for `fieldValidation` to use server-side validation). No schemas.
 * @see https://kubernetes.io/docs/concepts/overview/kubernetes-api/#openapi-v3
 */
export function openApiGroupVersion(resources: readonly ResourceDefinition[], group: string, version: string): JsonObject | undefined {
  const defs = resources.filter((d) => d.group === group && d.version === version);
  if (defs.length === 0) {
    return undefined;
  }
  const paths: JsonObject = {};
  for (const def of defs) {
    const base = `/${gvPath(group, version)}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.resource}`;
    paths[base] = { get: operation(def, 'list'), post: operation(def, 'post') };
    paths[`${base}/{name}`] = { get: operation(def, 'get'), put: operation(def, 'put'), patch: operation(def, 'patch'), delete: operation(def, 'delete') };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas: {} } };
}

/** `/openapi/v3`: the group versions and where their documents are. */
export function openApiRoot(resources: readonly ResourceDefinition[]): JsonObject {
  const paths: JsonObject = {};
  for (const { group, version } of new Map(resources.map((d) => [`${d.group}/${d.version}`, d])).values()) {
    const hash = createHash('sha512').update(JSON.stringify(openApiGroupVersion(resources, group, version))).digest('hex').slice(0, 64).toUpperCase();
    paths[gvPath(group, version)] = { serverRelativeURL: `/openapi/v3/${gvPath(group, version)}?hash=${hash}` };
  }
  return { paths };
}
