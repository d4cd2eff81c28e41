import type { FieldError } from '../api-error';
import { isJsonObject, jsonEqual, type JsonValue } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { ResourceStrategy } from '../resource-definition';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function list(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

function count(value: JsonValue | undefined): number {
  return list(value).length;
}

/**
 * ValidatePolicyRule: verbs required; non-resource URLs only in ClusterRoles and never mixed with
 * resources; resource rules need API groups and resources.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/rbac/validation/validation.go
 */
function validateRules(role: KubeObject, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const rules = role['rules'];
  if (rules !== undefined && rules !== null && !Array.isArray(rules)) {
    return [{ type: 'Invalid', field: 'rules', value: rules, detail: 'must be a list' }];
  }
  list(rules as JsonValue).forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (!isJsonObject(rule)) {
      errors.push({ type: 'Invalid', field: at, value: rule, detail: 'must be an object' });
      return;
    }
    if (count(rule['verbs']) === 0) {
      errors.push({ type: 'Required', field: `${at}.verbs`, detail: 'verbs must contain at least one value' });
    }
    if (count(rule['nonResourceURLs']) > 0) {
      if (namespaced) {
        errors.push({ type: 'Invalid', field: `${at}.nonResourceURLs`, value: rule['nonResourceURLs'], detail: 'namespaced rules cannot apply to non-resource URLs' });
      }
      if (count(rule['apiGroups']) > 0 || count(rule['resources']) > 0 || count(rule['resourceNames']) > 0) {
        errors.push({ type: 'Invalid', field: `${at}.nonResourceURLs`, value: rule['nonResourceURLs'], detail: 'rules cannot apply to both regular resources and non-resource URLs' });
      }
      return;
    }
    if (count(rule['apiGroups']) === 0) {
      errors.push({ type: 'Required', field: `${at}.apiGroups`, detail: 'resource rules must supply at least one api group' });
    }
    if (count(rule['resources']) === 0) {
      errors.push({ type: 'Required', field: `${at}.resources`, detail: 'resource rules must supply at least one resource' });
    }
  });
  return errors;
}

function validateBinding(binding: KubeObject, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const ref = isJsonObject(binding['roleRef']) ? binding['roleRef'] : {};
  if (ref['apiGroup'] !== RBAC_GROUP) {
    errors.push({ type: 'NotSupported', field: 'roleRef.apiGroup', value: ref['apiGroup'] ?? '', detail: `supported values: "${RBAC_GROUP}"` });
  }
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(String(ref['kind'] ?? ''))) {
    errors.push({ type: 'NotSupported', field: 'roleRef.kind', value: ref['kind'] ?? '', detail: `supported values: ${kinds.map((k) => `"${k}"`).join(', ')}` });
  }
  if (typeof ref['name'] !== 'string' || ref['name'] === '') {
    errors.push({ type: 'Required', field: 'roleRef.name' });
  }
  list(binding['subjects'] as JsonValue).forEach((subject, i) => {
    const at = `subjects[${i}]`;
    if (!isJsonObject(subject)) {
      errors.push({ type: 'Invalid', field: at, value: subject, detail: 'must be an object' });
      return;
    }
    if (typeof subject['name'] !== 'string' || subject['name'] === '') {
      errors.push({ type: 'Required', field: `${at}.name` });
    }
    const kind = subject['kind'];
    if (kind === 'ServiceAccount') {
      if (subject['apiGroup'] !== undefined && subject['apiGroup'] !== '') {
        errors.push({ type: 'NotSupported', field: `${at}.apiGroup`, value: subject['apiGroup'], detail: 'supported values: ""' });
      }
      if (!namespaced && (typeof subject['namespace'] !== 'string' || subject['namespace'] === '')) {
        errors.push({ type: 'Required', field: `${at}.namespace` });
      }
    } else if (kind === 'User' || kind === 'Group') {
      if (subject['apiGroup'] !== RBAC_GROUP) {
        errors.push({ type: 'NotSupported', field: `${at}.apiGroup`, value: subject['apiGroup'] ?? '', detail: `supported values: "${RBAC_GROUP}"` });
      }
    } else {
      errors.push({ type: 'NotSupported', field: `${at}.kind`, value: kind ?? '', detail: 'supported values: "ServiceAccount", "User", "Group"' });
    }
  });
  return errors;
}

/** Role (namespaced) and ClusterRole strategies: rule validation. */
export function roleStrategy(namespaced: boolean): ResourceStrategy {
  return {
    validateCreate: (role) => validateRules(role, namespaced),
    validateUpdate: (role) => validateRules(role, namespaced),
  };
}

/** RoleBinding and ClusterRoleBinding strategies: roleRef and subject validation, roleRef immutable. */
export function bindingStrategy(namespaced: boolean): ResourceStrategy {
  return {
    defaults(binding) {
      const ref = binding['roleRef'];
      if (isJsonObject(ref) && ref['apiGroup'] === undefined) {
        ref['apiGroup'] = RBAC_GROUP;
      }
      for (const subject of list(binding['subjects'] as JsonValue)) {
        if (isJsonObject(subject) && subject['apiGroup'] === undefined && (subject['kind'] === 'User' || subject['kind'] === 'Group')) {
          subject['apiGroup'] = RBAC_GROUP;
        }
      }
    },
    validateCreate: (binding) => validateBinding(binding, namespaced),
    validateUpdate(binding, old) {
      const errors = validateBinding(binding, namespaced);
      if (!jsonEqual(binding['roleRef'], old['roleRef'])) {
        errors.push({ type: 'Invalid', field: 'roleRef', value: binding['roleRef'], detail: 'cannot change roleRef' });
      }
      return errors;
    },
  };
}
