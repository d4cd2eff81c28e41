import type { AdmissionPlugin, AdmissionRequest } from '../admission';
import { isJsonObject, jsonEqual } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { UserInfo } from '../user-info';
import { resourceAttributes } from './attributes';
import { forbiddenError, PRIVILEGED_GROUP, type Authorizer } from './authorizer';
import { compactString, covers, rulesOf, type PolicyRule } from './policy-rule';
import { roleRefOf } from './rbac-authorizer';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function goQuotedList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

/** Whether an update changes nothing but the fields the garbage collector writes (IsOnlyMutatingGCFields). */
function onlyGcFields(obj: KubeObject | undefined, old: KubeObject | undefined): boolean {
  if (!obj || !old) {
    return false;
  }
  const strip = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, ownerReferences: undefined, finalizers: undefined, resourceVersion: undefined } });
  return jsonEqual(strip(obj), strip(old));
}

/**
 * RBAC's escalation prevention on roles and bindings: a user may create or update a Role or
 * ClusterRole only with rules they already hold in that scope (or with the `escalate` verb on it),
 * and a binding only to a role whose rules they hold (or with the `bind` verb on it). Members of
 * system:masters are exempt.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/#privilege-escalation-prevention-and-bootstrapping
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/rbac/validation/rule.go (ConfirmNoEscalation)
 */
export function rbacEscalationPrevention(authorizer: Authorizer): AdmissionPlugin {
  const confirmNoEscalation = (request: AdmissionRequest, rules: readonly PolicyRule[]): void => {
    const user: UserInfo = request.user;
    const owned = authorizer.rulesFor(user, request.namespace);
    const result = covers(owned.rules, rules);
    if (result.covered) {
      return;
    }
    const missing = [...new Set(result.missing.map(compactString))].sort();
    let message = `user ${JSON.stringify(user.username)} (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${missing.join('\n')}`;
    if (owned.errors.length > 0) {
      message += `; resolution errors: [${owned.errors.join(' ')}]`;
    }
    throw forbiddenError({ resource: request.def.resource, group: RBAC_GROUP, name: request.name }, message);
  };

  const allowedVerb = (request: AdmissionRequest, verb: string, resource: string, name: string): boolean =>
    authorizer.authorize(resourceAttributes(request.user, { verb, apiGroup: RBAC_GROUP, resource, namespace: request.namespace, name })).allowed;

  return (request) => {
    if (request.def.group !== RBAC_GROUP || request.subresource !== '' || request.operation === 'DELETE' || !request.object) {
      return;
    }
    if (request.user.groups.includes(PRIVILEGED_GROUP) || (request.operation === 'UPDATE' && onlyGcFields(request.object, request.oldObject))) {
      return;
    }
    const obj = request.object;
    const resource = request.def.resource;
    if (resource === 'roles' || resource === 'clusterroles') {
      if (allowedVerb(request, 'escalate', resource, request.name)) {
        return;
      }
      if (resource === 'clusterroles' && isJsonObject(obj['aggregationRule'])) {
        throw forbiddenError({ resource, group: RBAC_GROUP, name: request.name }, 'must have cluster-admin privileges to use the aggregationRule');
      }
      confirmNoEscalation(request, rulesOf(obj));
      return;
    }
    if (resource === 'rolebindings' || resource === 'clusterrolebindings') {
      const ref = roleRefOf(obj);
      if (allowedVerb(request, 'bind', ref.kind === 'Role' ? 'roles' : 'clusterroles', ref.name)) {
        return;
      }
      const { rules, error } = authorizer.rbac.roleReferenceRules(ref, request.namespace);
      if (error) {
        throw forbiddenError({ resource, group: RBAC_GROUP, name: request.name }, error);
      }
      confirmNoEscalation(request, rules);
    }
  };
}
