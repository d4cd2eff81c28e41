import { isJsonObject, type JsonObject, type JsonValue } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { ResourceDefinition } from '../resource-definition';
import type { ObjectStore } from '../store';
import type { UserInfo } from '../user-info';
import type { Attributes } from './attributes';
import { ruleAllows, type PolicyRule } from './policy-rule';
import type { Decision } from './rbac-authorizer';

/** Group of kubelet identities. */
export const NODES_GROUP = 'system:nodes';
const NODE_USER_PREFIX = 'system:node:';

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });

/**
 * The static rules of the Node authorizer (bootstrappolicy.NodeRules), what a kubelet may do besides
 * the graph-checked reads of secrets and configmaps and its own Lease.
 * @see https://github.com/kubernetes/kubernetes/blob/master/plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go
 */
export const NODE_RULES: readonly PolicyRule[] = [
  rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
  rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews']),
  rule(['get', 'list', 'watch'], [''], ['services']),
  rule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
  rule(['update', 'patch'], [''], ['nodes/status']),
  rule(['update', 'patch'], [''], ['nodes']),
  rule(['create', 'update', 'patch'], [''], ['events']),
  rule(['get', 'list', 'watch'], [''], ['pods']),
  rule(['create', 'delete'], [''], ['pods']),
  rule(['update', 'patch'], [''], ['pods/status']),
  rule(['create'], [''], ['pods/eviction']),
  rule(['get', 'list', 'watch'], [''], ['secrets', 'configmaps']),
  rule(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
  rule(['get'], [''], ['endpoints']),
  rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
  rule(['get', 'create', 'update', 'patch', 'delete'], ['coordination.k8s.io'], ['leases']),
  rule(['get'], ['storage.k8s.io'], ['volumeattachments']),
  rule(['create'], [''], ['serviceaccounts/token']),
  rule(['get', 'update', 'patch'], [''], ['persistentvolumeclaims/status']),
  rule(['get', 'watch', 'list'], ['storage.k8s.io'], ['csidrivers']),
  rule(['get', 'create', 'update', 'patch', 'delete'], ['storage.k8s.io'], ['csinodes']),
  rule(['get', 'list', 'watch'], ['node.k8s.io'], ['runtimeclasses']),
];

/** The node name of a kubelet identity (`system:node:<name>` in `system:nodes`), else undefined. */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.username.startsWith(NODE_USER_PREFIX)) {
    return undefined;
  }
  return user.username.slice(NODE_USER_PREFIX.length);
}

function names(list: JsonValue | undefined, pick: (item: JsonObject) => JsonValue | undefined): string[] {
  return (Array.isArray(list) ? list : []).filter(isJsonObject).flatMap((item) => {
    const value = pick(item);
    return typeof value === 'string' ? [value] : [];
  });
}

/** Names of the secrets or configmaps a pod refers to (volumes, env, envFrom, image pull secrets, projected sources). */
function referencedBy(pod: KubeObject, kind: 'secret' | 'configMap'): string[] {
  const spec = pod.spec ?? {};
  const out: string[] = [];
  const volumes = (Array.isArray(spec['volumes']) ? spec['volumes'] : []).filter(isJsonObject);
  for (const volume of volumes) {
    const source = volume[kind];
    if (isJsonObject(source)) {
      const name = kind === 'secret' ? source['secretName'] : source['name'];
      if (typeof name === 'string') {
        out.push(name);
      }
    }
    const projected = volume['projected'];
    if (isJsonObject(projected)) {
      out.push(...names(projected['sources'], (s) => (isJsonObject(s[kind]) ? (s[kind] as JsonObject)['name'] : undefined)));
    }
  }
  const containers = ['containers', 'initContainers', 'ephemeralContainers'].flatMap((field) => (Array.isArray(spec[field]) ? (spec[field] as JsonValue[]) : []).filter(isJsonObject));
  const refKey = kind === 'secret' ? 'secretKeyRef' : 'configMapKeyRef';
  const fromKey = kind === 'secret' ? 'secretRef' : 'configMapRef';
  for (const container of containers) {
    out.push(...names(container['env'], (e) => (isJsonObject(e['valueFrom']) && isJsonObject(e['valueFrom'][refKey]) ? (e['valueFrom'][refKey] as JsonObject)['name'] : undefined)));
    out.push(...names(container['envFrom'], (e) => (isJsonObject(e[fromKey]) ? (e[fromKey] as JsonObject)['name'] : undefined)));
  }
  if (kind === 'secret') {
    out.push(...names(spec['imagePullSecrets'], (s) => s['name']));
  }
  return out;
}

/**
 * The Node authorizer for kubelet identities: a node reads only the secrets and configmaps that pods
 * bound to it refer to, touches only its own Lease in kube-node-lease, and otherwise gets the static
 * node rules; everyone else gets no opinion. (NodeRestriction admission limits the writes further.)
 * @see https://kubernetes.io/docs/reference/access-authn-authz/node/
 * @see https://github.com/kubernetes/kubernetes/blob/master/plugin/pkg/auth/authorizer/node/node_authorizer.go
 */
export class NodeAuthorizer {
  private readonly pods: ResourceDefinition;

  constructor(private readonly store: ObjectStore) {
    const pods = store.definitions.find((d) => d.group === '' && d.resource === 'pods');
    if (!pods) {
      throw new Error('pods are not served');
    }
    this.pods = pods;
  }

  authorize(attrs: Attributes): Decision {
    const node = nodeIdentity(attrs.user);
    if (node === undefined) {
      return { allowed: false, reason: '' };
    }
    if (node === '') {
      return { allowed: false, reason: 'unknown node' };
    }
    if (attrs.resourceRequest && attrs.apiGroup === '' && (attrs.resource === 'secrets' || attrs.resource === 'configmaps')) {
      return this.authorizeRead(node, attrs, attrs.resource === 'secrets' ? 'secret' : 'configMap');
    }
    if (attrs.resourceRequest && attrs.apiGroup === 'coordination.k8s.io' && attrs.resource === 'leases') {
      return this.authorizeLease(node, attrs);
    }
    return { allowed: NODE_RULES.some((r) => ruleAllows(attrs, r)), reason: '' };
  }

  private authorizeRead(node: string, attrs: Attributes, kind: 'secret' | 'configMap'): Decision {
    if (!['get', 'list', 'watch'].includes(attrs.verb)) {
      return { allowed: false, reason: 'can only read resources of this type' };
    }
    if (attrs.subresource !== '') {
      return { allowed: false, reason: 'cannot read subresource' };
    }
    if (attrs.namespace === '') {
      return { allowed: false, reason: 'can only read namespaced object of this type' };
    }
    if (attrs.name === '') {
      return { allowed: false, reason: 'No Object name found' };
    }
    const related = this.store
      .list(this.pods, { nodeName: node })
      .some((pod) => pod.metadata.namespace === attrs.namespace && referencedBy(pod, kind).includes(attrs.name));
    return related ? { allowed: true, reason: '' } : { allowed: false, reason: `no relationship found between node '${node}' and this object` };
  }

  private authorizeLease(node: string, attrs: Attributes): Decision {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(attrs.verb)) {
      return { allowed: false, reason: 'can only get, create, update, patch, or delete a node lease' };
    }
    if (attrs.namespace !== 'kube-node-lease') {
      return { allowed: false, reason: 'can only access leases in this namespace: kube-node-lease' };
    }
    if (attrs.verb !== 'create' && attrs.name !== node) {
      return { allowed: false, reason: 'can only access node lease with the same name as the requesting node' };
    }
    return { allowed: true, reason: '' };
  }
}
