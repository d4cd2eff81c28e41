import type { FieldError } from '../api-error';
import type { KubeObject } from '../kube-object';
import type { ResourceStrategy } from '../resource-definition';
import { STATUS_WRITE } from './status-subresource';

function validateIntOrPercent(value: unknown, field: string): FieldError[] {
  if (value === undefined || value === null) {
    return [];
  }
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= 0 ? [] : [{ type: 'Invalid', field, value, detail: 'must be greater than or equal to 0' }];
  }
  if (typeof value === 'string') {
    const match = /^(\d+)%$/.exec(value);
    if (!match) {
      return [{ type: 'Invalid', field, value, detail: 'a valid percent string must be a numeric string followed by an ending \'%\' (e.g. \'1%\',  or \'93%\', regex used for validation is \'[0-9]+%\')' }];
    }
    return Number(match[1]) > 100 ? [{ type: 'Invalid', field, value, detail: 'must not be greater than 100%' }] : [];
  }
  return [{ type: 'Invalid', field, value, detail: 'must be an integer or percentage (e.g \'5%\')' }];
}

function validatePdb(pdb: KubeObject): FieldError[] {
  const spec = pdb.spec ?? {};
  const errors = [...validateIntOrPercent(spec['minAvailable'], 'spec.minAvailable'), ...validateIntOrPercent(spec['maxUnavailable'], 'spec.maxUnavailable')];
  if (spec['minAvailable'] !== undefined && spec['maxUnavailable'] !== undefined) {
    errors.push({ type: 'Invalid', field: 'spec', value: spec, detail: 'minAvailable and maxUnavailable cannot be both set' });
  }
  const policy = spec['unhealthyPodEvictionPolicy'];
  if (policy !== undefined && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow') {
    errors.push({ type: 'NotSupported', field: 'spec.unhealthyPodEvictionPolicy', value: policy, detail: 'supported values: "AlwaysAllow", "IfHealthyBudget"' });
  }
  return errors;
}

/**
 * PodDisruptionBudget strategy: the status belongs to the disruption controller (kept on updates,
 * written through /status); int-or-percent validation, minAvailable and maxUnavailable exclusive.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/policy/validation/validation.go
 */
export const PDB_STRATEGY: ResourceStrategy = {
  prepareForCreate(pdb) {
    pdb.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  },
  validateCreate: validatePdb,
  prepareForUpdate(pdb, old) {
    pdb.status = old.status;
  },
  validateUpdate: validatePdb,
  subresourceWrites: { status: STATUS_WRITE },
};
