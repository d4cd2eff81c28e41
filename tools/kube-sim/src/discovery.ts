import type { JsonObject } from './json-value';
import { apiVersionOf, type ResourceDefinition } from './resource-definition';

/** Server version reported on /version. */
export const SERVER_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-kube-sim' } as const;

/** `/version` (version.Info). */
export function versionInfo(): JsonObject {
  return {
    major: SERVER_VERSION.major,
    minor: SERVER_VERSION.minor,
    gitVersion: SERVER_VERSION.gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2024-12-11T00:00:00Z',
    goVersion: 'go1.23.3',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

function groupsOf(resources: readonly ResourceDefinition[]): Map<string, ResourceDefinition[]> {
  const groups = new Map<string, ResourceDefinition[]>();
  for (const def of resources) {
    if (def.group) {
      groups.set(def.group, [...(groups.get(def.group) ?? []), def]);
    }
  }
  return groups;
}

function groupEntry(group: string, defs: readonly ResourceDefinition[]): JsonObject {
  const versions = [...new Set(defs.map((d) => d.version))].map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

/** `/api` (APIVersions). */
export function coreVersions(serverAddress: string): JsonObject {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

/** `/apis` (APIGroupList). */
export function groupList(resources: readonly ResourceDefinition[]): JsonObject {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...groupsOf(resources)].map(([group, defs]) => groupEntry(group, defs)) };
}

/** `/apis/<group>` (APIGroup), or undefined when the group is not served. */
export function apiGroup(resources: readonly ResourceDefinition[], group: string): JsonObject | undefined {
  const defs = groupsOf(resources).get(group);
  return defs ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, defs) } : undefined;
}

/**
 * `/api/v1` and `/apis/<group>/<version>` (APIResourceList): each resource with its verbs, short
 * names and categories, then each subresource as `<resource>/<sub>` (pods/eviction carries group
 * policy, version v1, kind Eviction, which kubectl drain checks before using the Eviction API).
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#discovery-api
 */
export function resourceList(resources: readonly ResourceDefinition[], group: string, version: string): JsonObject | undefined {
  const defs = resources.filter((d) => d.group === group && d.version === version);
  if (defs.length === 0) {
    return undefined;
  }
  const entries: JsonObject[] = [];
  for (const def of defs) {
    const entry: JsonObject = { name: def.resource, singularName: def.singular, namespaced: def.namespaced, kind: def.kind, verbs: [...def.verbs] };
    if (def.shortNames.length > 0) {
      entry['shortNames'] = [...def.shortNames];
    }
    if (def.categories.length > 0) {
      entry['categories'] = [...def.categories];
    }
    entries.push(entry);
    for (const sub of def.subresources) {
      const subEntry: JsonObject = { name: `${def.resource}/${sub.name}`, singularName: '', namespaced: def.namespaced, kind: sub.kind, verbs: [...sub.verbs] };
      if (sub.group !== undefined) {
        subEntry['group'] = sub.group;
        subEntry['version'] = sub.version ?? 'v1';
      }
      entries.push(subEntry);
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group, version }), resources: entries };
}

/** Content type of aggregated discovery documents. */
export const AGGREGATED_DISCOVERY_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

function discoveryGroup(name: string, defs: readonly ResourceDefinition[]): JsonObject {
  const versions = [...new Set(defs.map((d) => d.version))].map((version) => ({
    version,
    resources: defs
      .filter((d) => d.version === version)
      .map((def) => {
        const entry: JsonObject = {
          resource: def.resource,
          responseKind: { group: def.group, version: def.version, kind: def.kind },
          scope: def.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: def.singular,
          verbs: [...def.verbs],
        };
        if (def.shortNames.length > 0) {
          entry['shortNames'] = [...def.shortNames];
        }
        if (def.categories.length > 0) {
          entry['categories'] = [...def.categories];
        }
        if (def.subresources.length > 0) {
          entry['subresources'] = def.subresources.map((sub) => ({
            subresource: sub.name,
            responseKind: { group: sub.group ?? def.group, version: sub.version ?? def.version, kind: sub.kind },
            verbs: [...sub.verbs],
          }));
        }
        return entry;
      }),
    freshness: 'Current',
  }));
  return { metadata: { name, creationTimestamp: null }, versions };
}

/**
 * Aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) for `/api` (core only) or
 * `/apis` (every named group), what kubectl asks for first.
 * @see https://kubernetes.io/docs/concepts/overview/kubernetes-api/#aggregated-discovery
 */
export function aggregatedDiscovery(resources: readonly ResourceDefinition[], core: boolean): JsonObject {
  const items = core
    ? [discoveryGroup('', resources.filter((d) => d.group === ''))]
    : [...groupsOf(resources)].map(([group, defs]) => discoveryGroup(group, defs));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}
