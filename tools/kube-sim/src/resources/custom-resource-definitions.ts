import type { FieldError } from '../api-error';
import { isJsonObject } from '../json-value';
import { kubeTime, type KubeObject } from '../kube-object';
import type { ResourceStrategy } from '../resource-definition';
import { STATUS_WRITE } from './status-subresource';

export interface CrdNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema?: { openAPIV3Schema?: unknown };
  subresources?: { status?: unknown };
}

export function namesOf(obj: KubeObject): CrdNames {
  return (isJsonObject(obj.spec?.['names']) ? obj.spec['names'] : {}) as unknown as CrdNames;
}

export function versionsOf(obj: KubeObject): CrdVersion[] {
  const versions = obj.spec?.['versions'];
  return (Array.isArray(versions) ? versions.filter(isJsonObject) : []) as unknown as CrdVersion[];
}

function validateCrd(obj: KubeObject): FieldError[] {
  const spec = obj.spec ?? {};
  const names = namesOf(obj);
  const errors: FieldError[] = [];
  if (typeof spec['group'] !== 'string' || !spec['group'].includes('.')) {
    errors.push({ type: 'Invalid', field: 'spec.group', value: spec['group'], detail: 'should be a domain with at least one dot' });
  }
  if (!names.plural) {
    errors.push({ type: 'Required', field: 'spec.names.plural' });
  }
  if (!names.kind) {
    errors.push({ type: 'Required', field: 'spec.names.kind' });
  }
  if (obj.metadata.name !== `${names.plural}.${String(spec['group'])}`) {
    errors.push({ type: 'Invalid', field: 'metadata.name', value: obj.metadata.name, detail: 'must be spec.names.plural+"."+spec.group' });
  }
  if (spec['scope'] !== 'Namespaced' && spec['scope'] !== 'Cluster') {
    errors.push({ type: 'NotSupported', field: 'spec.scope', value: spec['scope'], detail: 'supported values: "Cluster", "Namespaced"' });
  }
  const versions = versionsOf(obj);
  if (versions.length === 0) {
    errors.push({ type: 'Invalid', field: 'spec.versions', value: versions, detail: 'must have exactly one version marked as storage version' });
  } else if (versions.filter((v) => v.storage).length !== 1) {
    errors.push({ type: 'Invalid', field: 'spec.versions', value: versions, detail: 'must have exactly one version marked as storage version' });
  }
  versions.forEach((version, i) => {
    if (!isJsonObject(version.schema?.openAPIV3Schema)) {
      errors.push({ type: 'Required', field: `spec.versions[${i}].schema.openAPIV3Schema`, detail: 'schemas are required' });
    }
  });
  return errors;
}

/**
 * CustomResourceDefinition strategy (apiextensions.k8s.io/v1): the names and versions checks of
 * apiextensions' validation, and the status the establishing controller would write at once
 * (NamesAccepted and Established, accepted names, stored versions) — kube-sim has no name conflicts
 * to wait for.
 * @see https://github.com/kubernetes/apiextensions-apiserver/blob/master/pkg/apis/apiextensions/validation/validation.go
 */
export const CRD_STRATEGY: ResourceStrategy = {
  prepareForCreate(obj, ctx) {
    const names = namesOf(obj);
    const now = kubeTime(ctx.now);
    obj.status = {
      acceptedNames: { ...names, singular: names.singular ?? names.kind?.toLowerCase(), listKind: names.listKind ?? `${names.kind}List` },
      conditions: [
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: now },
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: now },
      ],
      storedVersions: versionsOf(obj).filter((v) => v.storage).map((v) => v.name),
    };
  },
  validateCreate: validateCrd,
  prepareForUpdate(obj, old) {
    obj.status = old.status;
  },
  validateUpdate: validateCrd,
  subresourceWrites: { status: STATUS_WRITE },
};
