import { isJsonObject } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { ResourceDefinition } from '../resource-definition';
import type { ObjectStore } from '../store';
import type { UserInfo } from '../user-info';
import type { Attributes } from './attributes';
import { ruleAllows, rulesOf, type PolicyRule } from './policy-rule';

/** An authorizer's answer: Allow, or NoOpinion with the reason the next one (or the Forbidden message) gets. */
export interface Decision {
  allowed: boolean;
  reason: string;
}

/** Rules an authorizer can enumerate for a user in a namespace (SelfSubjectRulesReview). */
export interface RuleSet {
  rules: PolicyRule[];
  incomplete: boolean;
  errors: string[];
}

/** `rbac.authorization.k8s.io/v1` Subject. */
export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

/** The subjects of a stored binding. */
export function subjectsOf(binding: KubeObject): Subject[] {
  const list = binding['subjects'];
  return (Array.isArray(list) ? list : []).filter(isJsonObject).map((s) => ({
    kind: String(s['kind'] ?? ''),
    name: String(s['name'] ?? ''),
    namespace: typeof s['namespace'] === 'string' ? s['namespace'] : undefined,
    apiGroup: typeof s['apiGroup'] === 'string' ? s['apiGroup'] : undefined,
  }));
}

/** `roleRef` of a stored binding. */
export function roleRefOf(binding: KubeObject): { kind: string; name: string; apiGroup: string } {
  const ref = isJsonObject(binding['roleRef']) ? binding['roleRef'] : {};
  return { kind: String(ref['kind'] ?? ''), name: String(ref['name'] ?? ''), apiGroup: String(ref['apiGroup'] ?? '') };
}

/** `system:serviceaccount:<ns>:<name>`. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/**
 * Whether a binding's subject names the user (appliesToUser): a User by name, a Group the user is
 * in, or a ServiceAccount whose username the user has (namespace defaulting to the binding's).
 */
function appliesTo(user: UserInfo, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount':
      return user.username === serviceAccountUsername(subject.namespace || bindingNamespace, subject.name);
    default:
      return false;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') {
    return `${subject.kind} ${JSON.stringify(`${subject.name}/${subject.namespace || bindingNamespace}`)}`;
  }
  return `${subject.kind} ${JSON.stringify(subject.name)}`;
}

type Visitor = (source: string, rule: PolicyRule) => boolean;

/**
 * The RBAC authorizer: Roles, ClusterRoles, RoleBindings and ClusterRoleBindings read from the
 * store on every request, rules matched by verb, API group, resource/subresource and resource name
 * (or non-resource URL), with the real reasons ("RBAC: allowed by ClusterRoleBinding ...") and the
 * errors of bindings whose role is missing.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/rbac/validation/rule.go
 */
export class RbacAuthorizer {
  private readonly roles: ResourceDefinition;
  private readonly clusterRoles: ResourceDefinition;
  private readonly roleBindings: ResourceDefinition;
  private readonly clusterRoleBindings: ResourceDefinition;

  constructor(private readonly store: ObjectStore) {
    const find = (resource: string): ResourceDefinition => {
      const def = store.definitions.find((d) => d.group === 'rbac.authorization.k8s.io' && d.resource === resource);
      if (!def) {
        throw new Error(`rbac ${resource} are not served`);
      }
      return def;
    };
    this.roles = find('roles');
    this.clusterRoles = find('clusterroles');
    this.roleBindings = find('rolebindings');
    this.clusterRoleBindings = find('clusterrolebindings');
  }

  /** The rules a role reference resolves to, or the error the real resolver reports. */
  roleReferenceRules(ref: { kind: string; name: string }, namespace: string): { rules: PolicyRule[]; error?: string } {
    if (ref.kind === 'ClusterRole') {
      const role = this.store.get(this.clusterRoles, undefined, ref.name);
      return role ? { rules: rulesOf(role) } : { rules: [], error: `clusterrole.rbac.authorization.k8s.io "${ref.name}" not found` };
    }
    if (ref.kind === 'Role') {
      const role = this.store.get(this.roles, namespace, ref.name);
      return role ? { rules: rulesOf(role) } : { rules: [], error: `role.rbac.authorization.k8s.io "${ref.name}" not found` };
    }
    return { rules: [], error: `unsupported role reference kind: "${ref.kind}"` };
  }

  /** Calls `visit` for each rule that applies to the user in the namespace until it returns false; returns the resolution errors. */
  private visitRules(user: UserInfo, namespace: string, visit: Visitor): string[] {
    const errors: string[] = [];
    for (const binding of this.store.list(this.clusterRoleBindings)) {
      const subject = subjectsOf(binding).find((s) => appliesTo(user, s, ''));
      if (!subject) {
        continue;
      }
      const ref = roleRefOf(binding);
      const { rules, error } = this.roleReferenceRules(ref, '');
      if (error) {
        errors.push(error);
        continue;
      }
      const source = `ClusterRoleBinding ${JSON.stringify(binding.metadata.name ?? '')} of ${ref.kind} ${JSON.stringify(ref.name)} to ${describeSubject(subject, '')}`;
      for (const rule of rules) {
        if (!visit(source, rule)) {
          return errors;
        }
      }
    }
    if (namespace === '') {
      return errors;
    }
    for (const binding of this.store.list(this.roleBindings, { namespace })) {
      const subject = subjectsOf(binding).find((s) => appliesTo(user, s, namespace));
      if (!subject) {
        continue;
      }
      const ref = roleRefOf(binding);
      const { rules, error } = this.roleReferenceRules(ref, namespace);
      if (error) {
        errors.push(error);
        continue;
      }
      const source = `RoleBinding ${JSON.stringify(`${binding.metadata.name ?? ''}/${namespace}`)} of ${ref.kind} ${JSON.stringify(ref.name)} to ${describeSubject(subject, namespace)}`;
      for (const rule of rules) {
        if (!visit(source, rule)) {
          return errors;
        }
      }
    }
    return errors;
  }

  authorize(attrs: Attributes): Decision {
    let reason = '';
    const errors = this.visitRules(attrs.user, attrs.namespace, (source, rule) => {
      if (ruleAllows(attrs, rule)) {
        reason = `RBAC: allowed by ${source}`;
        return false;
      }
      return true;
    });
    if (reason) {
      return { allowed: true, reason };
    }
    return { allowed: false, reason: errors.length === 0 ? '' : `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}` };
  }

  /** Every rule that applies to the user in a namespace (cluster-wide ones included). */
  rulesFor(user: UserInfo, namespace: string): RuleSet {
    const rules: PolicyRule[] = [];
    const errors = this.visitRules(user, namespace, (_source, rule) => {
      rules.push(rule);
      return true;
    });
    return { rules, incomplete: errors.length > 0, errors };
  }
}
