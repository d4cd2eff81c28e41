import { isJsonObject, type JsonValue } from '../json-value';
import { combinedResource, type Attributes } from './attributes';

/** `rbac.authorization.k8s.io/v1` PolicyRule. */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const ALL = '*';

function strings(value: JsonValue | undefined): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/** The rules of a stored Role or ClusterRole (malformed entries dropped). */
export function rulesOf(role: { [key: string]: unknown }): PolicyRule[] {
  const rules = Array.isArray(role['rules']) ? (role['rules'] as JsonValue[]) : [];
  return rules.filter(isJsonObject).map((r) => ({
    verbs: strings(r['verbs']) ?? [],
    apiGroups: strings(r['apiGroups']),
    resources: strings(r['resources']),
    resourceNames: strings(r['resourceNames']),
    nonResourceURLs: strings(r['nonResourceURLs']),
  }));
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.includes(ALL) || rule.verbs.includes(verb);
}

function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  const groups = rule.apiGroups ?? [];
  return groups.includes(ALL) || groups.includes(group);
}

/** `*`, the exact `resource/subresource`, or `*\/subresource` for any resource's subresource. */
function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return (rule.resources ?? []).some((r) => r === ALL || r === combined || (subresource !== '' && r === `*/${subresource}`));
}

function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

function nonResourceUrlMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((url) => url === ALL || url === path || (url.endsWith('*') && path.startsWith(url.slice(0, -1))));
}

/**
 * Whether one rule allows a request, as rbac.RuleAllows does.
 * @see https://github.com/kubernetes/kubernetes/blob/master/plugin/pkg/auth/authorizer/rbac/rbac.go
 */
export function ruleAllows(attrs: Attributes, rule: PolicyRule): boolean {
  if (attrs.resourceRequest) {
    return (
      verbMatches(rule, attrs.verb) &&
      apiGroupMatches(rule, attrs.apiGroup) &&
      resourceMatches(rule, combinedResource(attrs), attrs.subresource) &&
      resourceNameMatches(rule, attrs.name)
    );
  }
  return verbMatches(rule, attrs.verb) && nonResourceUrlMatches(rule, attrs.path);
}

/** One verb on one group/resource/name (or on one URL): the unit escalation checks compare. */
interface SimpleRule {
  verb: string;
  apiGroup?: string;
  resource?: string;
  resourceName?: string;
  url?: string;
}

function breakdown(rule: PolicyRule): SimpleRule[] {
  const out: SimpleRule[] = [];
  for (const verb of rule.verbs) {
    for (const apiGroup of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) {
          out.push({ verb, apiGroup, resource });
        } else {
          names.forEach((resourceName) => out.push({ verb, apiGroup, resource, resourceName }));
        }
      }
    }
    for (const url of rule.nonResourceURLs ?? []) {
      out.push({ verb, url });
    }
  }
  return out;
}

function ownerCoversResource(owner: PolicyRule, requested: string): boolean {
  const resources = owner.resources ?? [];
  if (resources.includes(ALL) || resources.includes(requested)) {
    return true;
  }
  const slash = requested.indexOf('/');
  return slash > 0 && (resources.includes(`*${requested.slice(slash)}`) || resources.includes(`${requested.slice(0, slash)}/*`));
}

function ownerCovers(owner: PolicyRule, requested: SimpleRule): boolean {
  if (!owner.verbs.includes(ALL) && !owner.verbs.includes(requested.verb)) {
    return false;
  }
  if (requested.url !== undefined) {
    return (owner.nonResourceURLs ?? []).some((url) => url === ALL || url === requested.url || (url.endsWith('*') && (requested.url ?? '').startsWith(url.slice(0, -1))));
  }
  const groups = owner.apiGroups ?? [];
  if (!groups.includes(ALL) && !groups.includes(requested.apiGroup ?? '')) {
    return false;
  }
  if (!ownerCoversResource(owner, requested.resource ?? '')) {
    return false;
  }
  const names = owner.resourceNames ?? [];
  return names.length === 0 || (requested.resourceName !== undefined && names.includes(requested.resourceName));
}

/**
 * Whether the owner's rules cover every requested rule (validation.Covers), and the rules they
 * miss, compacted per group/resource/name with their verbs together.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/rbac/validation/policy_comparator.go
 */
export function covers(ownerRules: readonly PolicyRule[], requested: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing: SimpleRule[] = [];
  for (const rule of requested) {
    for (const simple of breakdown(rule)) {
      if (!ownerRules.some((owner) => ownerCovers(owner, simple))) {
        missing.push(simple);
      }
    }
  }
  const compact = new Map<string, PolicyRule>();
  for (const m of missing) {
    const key = JSON.stringify([m.apiGroup, m.resource, m.resourceName, m.url]);
    const existing = compact.get(key);
    if (existing) {
      existing.verbs.push(m.verb);
    } else if (m.url !== undefined) {
      compact.set(key, { verbs: [m.verb], nonResourceURLs: [m.url] });
    } else {
      compact.set(key, { verbs: [m.verb], apiGroups: [m.apiGroup ?? ''], resources: [m.resource ?? ''], ...(m.resourceName !== undefined ? { resourceNames: [m.resourceName] } : {}) });
    }
  }
  return { covered: missing.length === 0, missing: [...compact.values()] };
}

function goQuoted(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

/** `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`, as rbacv1helpers.CompactString. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if (rule.apiGroups && rule.apiGroups.length > 0) {
    parts.push(`APIGroups:${goQuoted(rule.apiGroups)}`);
  }
  if (rule.resources && rule.resources.length > 0) {
    parts.push(`Resources:${goQuoted(rule.resources)}`);
  }
  if (rule.nonResourceURLs && rule.nonResourceURLs.length > 0) {
    parts.push(`NonResourceURLs:${goQuoted(rule.nonResourceURLs)}`);
  }
  if (rule.resourceNames && rule.resourceNames.length > 0) {
    parts.push(`ResourceNames:${goQuoted(rule.resourceNames)}`);
  }
  if (rule.verbs.length > 0) {
    parts.push(`Verbs:${goQuoted(rule.verbs)}`);
  }
  return `{${parts.join(', ')}}`;
}
