import { ApiError, failureStatus, type ErrorSubject, qualifiedResource } from '../api-error';
import type { JsonObject } from '../json-value';
import type { ObjectStore } from '../store';
import type { UserInfo } from '../user-info';
import { combinedResource, type Attributes } from './attributes';
import { NodeAuthorizer, nodeIdentity } from './node-authorizer';
import type { PolicyRule } from './policy-rule';
import { RbacAuthorizer, type Decision, type RuleSet } from './rbac-authorizer';

/** The group whose members may do anything, whatever RBAC says. */
export const PRIVILEGED_GROUP = 'system:masters';

/**
 * The API server's authorizer chain for `--authorization-mode=Node,RBAC`: members of system:masters
 * are allowed first, then the Node authorizer, then RBAC; the first Allow wins and the reasons of the
 * others are kept for the Forbidden message.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authorization/#authorization-modules
 */
export class Authorizer {
  readonly rbac: RbacAuthorizer;
  private readonly node: NodeAuthorizer;

  constructor(store: ObjectStore) {
    this.rbac = new RbacAuthorizer(store);
    this.node = new NodeAuthorizer(store);
  }

  authorize(attrs: Attributes): Decision {
    if (attrs.user.groups.includes(PRIVILEGED_GROUP)) {
      return { allowed: true, reason: '' };
    }
    const reasons: string[] = [];
    for (const decision of [this.node.authorize(attrs), this.rbac.authorize(attrs)]) {
      if (decision.allowed) {
        return decision;
      }
      if (decision.reason) {
        reasons.push(decision.reason);
      }
    }
    return { allowed: false, reason: reasons.join('\n') };
  }

  /** Throws the real Forbidden Status unless the request is allowed. */
  check(attrs: Attributes): void {
    const decision = this.authorize(attrs);
    if (!decision.allowed) {
      throw forbiddenRequest(attrs, decision.reason);
    }
  }

  /** What SelfSubjectRulesReview reports: the rules of system:masters, or RBAC's (incomplete for nodes). */
  rulesFor(user: UserInfo, namespace: string): RuleSet {
    if (user.groups.includes(PRIVILEGED_GROUP)) {
      const everything: PolicyRule[] = [
        { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
        { verbs: ['*'], nonResourceURLs: ['*'] },
      ];
      return { rules: [...everything, ...this.rbac.rulesFor(user, namespace).rules], incomplete: false, errors: [] };
    }
    const rbac = this.rbac.rulesFor(user, namespace);
    if (nodeIdentity(user) !== undefined) {
      return { rules: rbac.rules, incomplete: true, errors: [...rbac.errors, 'node authorizer does not support user rule resolution'] };
    }
    return rbac;
  }
}

/**
 * The Forbidden Status of a refused request, word for word what responsewriters.Forbidden writes:
 * `pods "x" is forbidden: User "u" cannot create resource "pods/eviction" in API group "" in the
 * namespace "ns"`, followed by the authorizers' reasons.
 * @see https://github.com/kubernetes/apiserver/blob/master/pkg/endpoints/handlers/responsewriters/errors.go
 */
export function forbiddenRequest(attrs: Attributes, reason: string): ApiError {
  const who = JSON.stringify(attrs.user.username);
  let message: string;
  if (!attrs.resourceRequest) {
    message = `User ${who} cannot ${attrs.verb} path ${JSON.stringify(attrs.path)}`;
  } else if (attrs.namespace) {
    message = `User ${who} cannot ${attrs.verb} resource ${JSON.stringify(combinedResource(attrs))} in API group ${JSON.stringify(attrs.apiGroup)} in the namespace ${JSON.stringify(attrs.namespace)}`;
  } else {
    message = `User ${who} cannot ${attrs.verb} resource ${JSON.stringify(combinedResource(attrs))} in API group ${JSON.stringify(attrs.apiGroup)} at the cluster scope`;
  }
  if (reason) {
    message = `${message}: ${reason}`;
  }
  return forbiddenError(attrs.resourceRequest ? { resource: attrs.resource, group: attrs.apiGroup, name: attrs.name } : undefined, message);
}

/** apierrors.NewForbidden: `<resource> "<name>" is forbidden: <why>` (or `forbidden: <why>` without a resource). */
export function forbiddenError(subject: ErrorSubject | undefined, why: string): ApiError {
  if (!subject || subject.resource === '') {
    return new ApiError(failureStatus(403, 'Forbidden', `forbidden: ${why}`, {}));
  }
  const details: JsonObject = {};
  if (subject.name) {
    details['name'] = subject.name;
  }
  if (subject.group) {
    details['group'] = subject.group;
  }
  details['kind'] = subject.resource;
  const what = subject.name ? `${qualifiedResource(subject)} ${JSON.stringify(subject.name)}` : qualifiedResource(subject);
  return new ApiError(failureStatus(403, 'Forbidden', `${what} is forbidden: ${why}`, details));
}
