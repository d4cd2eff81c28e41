import type { IncomingHttpHeaders } from 'node:http';
import { internalError } from '../api-error';
import type { UserInfo } from '../user-info';
import { resourceAttributes, type Attributes } from './attributes';
import { forbiddenRequest, type Authorizer } from './authorizer';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const EXTRA_PREFIX = 'impersonate-extra-';

function headerValues(headers: IncomingHttpHeaders, name: string): string[] {
  const value = headers[name];
  if (value === undefined) {
    return [];
  }
  return (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

/**
 * The impersonation filter: `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
 * `Impersonate-Extra-<key>` headers replace the caller's identity after each is authorized with the
 * `impersonate` verb (on `users`, `serviceaccounts` for `system:serviceaccount:<ns>:<name>`,
 * `groups`, `uids`, `userextras/<key>`); a refusal is the usual Forbidden. The impersonated user
 * gets `system:authenticated` (a ServiceAccount also its two groups when none are given).
 * Returns the caller unchanged when no header asks for impersonation.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authentication/#user-impersonation
 * @see https://github.com/kubernetes/apiserver/blob/master/pkg/endpoints/filters/impersonation.go
 */
export function impersonate(requestor: UserInfo, headers: IncomingHttpHeaders, authorizer: Authorizer): UserInfo {
  const username = typeof headers['impersonate-user'] === 'string' ? headers['impersonate-user'] : undefined;
  // Node joins repeated headers with ", ", so several Impersonate-Group headers arrive as one list.
  const requestedGroups = headerValues(headers, 'impersonate-group');
  const uid = typeof headers['impersonate-uid'] === 'string' ? headers['impersonate-uid'] : undefined;
  const extra: Record<string, string[]> = {};
  for (const header of Object.keys(headers)) {
    if (header.startsWith(EXTRA_PREFIX)) {
      extra[decodeURIComponent(header.slice(EXTRA_PREFIX.length))] = headerValues(headers, header);
    }
  }
  if (username === undefined && requestedGroups.length === 0 && uid === undefined && Object.keys(extra).length === 0) {
    return requestor;
  }
  if (username === undefined || username === '') {
    throw internalError('requested impersonation of groups, extra or uid without impersonating a user');
  }
  const checks: Attributes[] = [];
  let groups: string[] = [...requestedGroups];
  if (username.startsWith(SERVICE_ACCOUNT_PREFIX) && username.split(':').length === 4) {
    const [, , namespace, name] = username.split(':');
    checks.push(resourceAttributes(requestor, { verb: 'impersonate', resource: 'serviceaccounts', namespace, name }));
    if (requestedGroups.length === 0) {
      groups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
    }
  } else {
    checks.push(resourceAttributes(requestor, { verb: 'impersonate', resource: 'users', name: username }));
  }
  for (const group of requestedGroups) {
    checks.push(resourceAttributes(requestor, { verb: 'impersonate', resource: 'groups', name: group }));
  }
  for (const [key, values] of Object.entries(extra)) {
    for (const value of values) {
      checks.push(resourceAttributes(requestor, { verb: 'impersonate', apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: key, name: value }));
    }
  }
  if (uid !== undefined) {
    checks.push(resourceAttributes(requestor, { verb: 'impersonate', apiGroup: 'authentication.k8s.io', resource: 'uids', name: uid }));
  }
  for (const attrs of checks) {
    const decision = authorizer.authorize(attrs);
    if (!decision.allowed) {
      throw forbiddenRequest(attrs, decision.reason);
    }
  }
  if (username === 'system:anonymous') {
    if (!groups.includes('system:unauthenticated')) {
      groups.push('system:unauthenticated');
    }
  } else if (!groups.includes('system:authenticated') && !groups.includes('system:unauthenticated')) {
    groups.push('system:authenticated');
  }
  return { username, groups, ...(uid !== undefined ? { uid } : {}), ...(Object.keys(extra).length > 0 ? { extra } : {}) };
}
