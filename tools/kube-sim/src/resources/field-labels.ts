import { readPath } from '../json-value';
import type { FieldGetter } from '../selectors';

/**
 * A field getter that stringifies the value at a dotted path (`spec.unschedulable` → "true"/"false").
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/field-selectors/
 */
export function fieldAt(path: string, whenMissing?: string): FieldGetter {
  const steps = path.split('.');
  return (obj) => {
    const value = readPath(obj, steps);
    if (value === undefined || value === null) {
      return whenMissing;
    }
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  };
}

/** `metadata.name` and, for namespaced resources, `metadata.namespace`: supported by every resource. */
export function metadataFieldLabels(namespaced: boolean): Record<string, FieldGetter> {
  return namespaced
    ? { 'metadata.name': fieldAt('metadata.name'), 'metadata.namespace': fieldAt('metadata.namespace') }
    : { 'metadata.name': fieldAt('metadata.name') };
}
