import type { FieldError } from '../api-error';
import { isJsonObject, jsonEqual } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { ResourceStrategy } from '../resource-definition';
import { labelSelectorFromObject } from '../selectors';
import { STATUS_WRITE } from './status-subresource';

function validateSelector(obj: KubeObject): FieldError[] {
  const selector = obj.spec?.['selector'];
  if (!isJsonObject(selector) || (Object.keys(selector).length === 0)) {
    return [{ type: 'Required', field: 'spec.selector' }];
  }
  const template = obj.spec?.['template'];
  const labels = isJsonObject(template) && isJsonObject(template['metadata']) ? template['metadata']['labels'] : undefined;
  const templateLabels = isJsonObject(labels) ? (labels as Record<string, string>) : {};
  if (!labelSelectorFromObject(selector).matches(templateLabels)) {
    return [{ type: 'Invalid', field: 'spec.template.metadata.labels', value: templateLabels, detail: '`selector` does not match template `labels`' }];
  }
  return [];
}

/**
 * Strategy of the apps/v1 workloads (Deployment, ReplicaSet, DaemonSet, StatefulSet): status reset on
 * create, a required selector matching the template, immutable selector. No controller runs: their
 * pods exist only if created or seeded.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/apps/replicaset/strategy.go
 */
export function workloadStrategy(hasReplicas: boolean): ResourceStrategy {
  return {
    defaults(obj) {
      obj.spec ??= {};
      if (hasReplicas) {
        obj.spec['replicas'] ??= 1;
      }
    },
    prepareForCreate(obj) {
      obj.status = {};
    },
    validateCreate: validateSelector,
    prepareForUpdate(obj, old) {
      obj.status = old.status;
    },
    validateUpdate(obj, old) {
      const errors = validateSelector(obj);
      if (!jsonEqual(obj.spec?.['selector'], old.spec?.['selector'])) {
        errors.push({ type: 'Invalid', field: 'spec.selector', value: obj.spec?.['selector'], detail: 'field is immutable' });
      }
      return errors;
    },
    subresourceWrites: { status: STATUS_WRITE },
  };
}
