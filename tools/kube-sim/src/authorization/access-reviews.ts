import { badRequest, invalid, type FieldError } from '../api-error';
import { isJsonObject, type JsonObject, type JsonValue } from '../json-value';
import type { UserInfo } from '../user-info';
import { nonResourceAttributes, resourceAttributes, type Attributes } from './attributes';
import type { Authorizer } from './authorizer';

const GROUP = 'authorization.k8s.io';
const API_VERSION = `${GROUP}/v1`;

/** The review kinds kube-sim answers, by plural resource name. */
export const ACCESS_REVIEW_KINDS: Readonly<Record<string, string>> = {
  selfsubjectaccessreviews: 'SelfSubjectAccessReview',
  subjectaccessreviews: 'SubjectAccessReview',
  localsubjectaccessreviews: 'LocalSubjectAccessReview',
  selfsubjectrulesreviews: 'SelfSubjectRulesReview',
};

function str(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function specOf(body: JsonValue | undefined): JsonObject {
  if (!isJsonObject(body)) {
    throw badRequest('the body of the request was not a JSON object');
  }
  return isJsonObject(body['spec']) ? body['spec'] : {};
}

function attributesOf(user: UserInfo, spec: JsonObject, kind: string, allowNonResource: boolean): Attributes {
  const resource = spec['resourceAttributes'];
  const nonResource = spec['nonResourceAttributes'];
  const errors: FieldError[] = [];
  if (isJsonObject(resource) && isJsonObject(nonResource)) {
    errors.push({ type: 'Invalid', field: 'spec.nonResourceAttributes', value: nonResource, detail: 'cannot be specified in combination with resourceAttributes' });
  } else if (!isJsonObject(resource) && !isJsonObject(nonResource)) {
    errors.push({ type: 'Invalid', field: 'spec.resourceAttributes', value: 'null', detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified' });
  } else if (isJsonObject(nonResource) && !allowNonResource) {
    errors.push({ type: 'Invalid', field: 'spec.nonResourceAttributes', value: nonResource, detail: 'disallowed on this kind of request' });
  }
  if (errors.length > 0) {
    throw invalid({ resource: kind, group: GROUP, kind, name: '' }, errors);
  }
  if (isJsonObject(nonResource)) {
    return nonResourceAttributes(user, str(nonResource['verb']), str(nonResource['path']));
  }
  const r = resource as JsonObject;
  return resourceAttributes(user, {
    verb: str(r['verb']),
    apiGroup: str(r['group']),
    apiVersion: str(r['version']) || '*',
    resource: str(r['resource']),
    subresource: str(r['subresource']),
    namespace: str(r['namespace']),
    name: str(r['name']),
  });
}

function reviewOf(kind: string, spec: JsonObject, status: JsonObject, namespace?: string): JsonObject {
  return { kind, apiVersion: API_VERSION, metadata: { ...(namespace ? { namespace } : {}), creationTimestamp: null }, spec, status };
}

function accessStatus(authorizer: Authorizer, attrs: Attributes): JsonObject {
  const decision = authorizer.authorize(attrs);
  return { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) };
}

/**
 * Answers a POST to one of authorization.k8s.io/v1's review resources: SelfSubjectAccessReview (the
 * caller), SubjectAccessReview (any user and groups), LocalSubjectAccessReview (one namespace),
 * SelfSubjectRulesReview (the caller's rules in a namespace). What `kubectl auth can-i` asks.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access
 */
export function answerAccessReview(authorizer: Authorizer, resource: string, namespace: string | undefined, caller: UserInfo, body: JsonValue | undefined): JsonObject {
  const kind = ACCESS_REVIEW_KINDS[resource];
  const spec = specOf(body);
  if (resource === 'selfsubjectaccessreviews') {
    return reviewOf(kind, spec, accessStatus(authorizer, attributesOf(caller, spec, kind, true)));
  }
  if (resource === 'subjectaccessreviews' || resource === 'localsubjectaccessreviews') {
    const user = str(spec['user']);
    const groups = strings(spec['groups']);
    if (user === '' && groups.length === 0) {
      throw invalid({ resource: kind, group: GROUP, kind, name: '' }, [{ type: 'Invalid', field: 'spec.user', value: '', detail: 'at least one of user or group must be specified' }]);
    }
    const extra = isJsonObject(spec['extra']) ? Object.fromEntries(Object.entries(spec['extra']).map(([k, v]) => [k, strings(v)])) : undefined;
    const subject: UserInfo = { username: user, groups, ...(str(spec['uid']) ? { uid: str(spec['uid']) } : {}), ...(extra ? { extra } : {}) };
    const attrs = attributesOf(subject, spec, kind, resource === 'subjectaccessreviews');
    if (resource === 'localsubjectaccessreviews' && attrs.namespace !== (namespace ?? '')) {
      throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace ?? ''}`);
    }
    return reviewOf(kind, spec, accessStatus(authorizer, attrs), resource === 'localsubjectaccessreviews' ? namespace : undefined);
  }
  const rules = authorizer.rulesFor(caller, str(spec['namespace']));
  const resourceRules = rules.rules
    .filter((r) => (r.nonResourceURLs ?? []).length === 0)
    .map((r) => ({ verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], ...((r.resourceNames ?? []).length > 0 ? { resourceNames: r.resourceNames ?? [] } : {}) }));
  const nonResourceRules = rules.rules.filter((r) => (r.nonResourceURLs ?? []).length > 0).map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs ?? [] }));
  const status: JsonObject = { resourceRules, nonResourceRules, incomplete: rules.incomplete };
  if (rules.errors.length > 0) {
    status['evaluationError'] = rules.errors.join(', ');
  }
  return reviewOf(kind, spec, status);
}
