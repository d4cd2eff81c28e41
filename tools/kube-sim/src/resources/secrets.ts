import type { FieldError } from '../api-error';
import { badRequest } from '../api-error';
import { isJsonObject } from '../json-value';
import type { KubeObject } from '../kube-object';
import type { ResourceStrategy } from '../resource-definition';
import { fieldAt } from './field-labels';

export const SECRET_FIELD_LABELS = { type: fieldAt('type', '') };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;

/** Folds `stringData` into base64 `data`, as the v1 conversion of Secret does, and defaults `type`. */
function normalizeSecret(secret: KubeObject): void {
  secret['type'] ??= 'Opaque';
  const stringData = secret['stringData'];
  const data = isJsonObject(secret['data']) ? { ...secret['data'] } : {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value !== 'string' || value.length % 4 !== 0 || !BASE64.test(value)) {
      throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0 (key ${key})`);
    }
  }
  if (isJsonObject(stringData)) {
    for (const [key, value] of Object.entries(stringData)) {
      data[key] = Buffer.from(String(value), 'utf8').toString('base64');
    }
  }
  delete secret['stringData'];
  if (Object.keys(data).length > 0 || secret['data'] !== undefined) {
    secret['data'] = data;
  }
}

function validateSecret(secret: KubeObject): FieldError[] {
  const data = isJsonObject(secret['data']) ? secret['data'] : {};
  const errors: FieldError[] = Object.keys(data)
    .filter((key) => !DATA_KEY.test(key))
    .map((key) => ({ type: 'Invalid', field: `data[${key}]`, value: key, detail: "a valid config key must consist of alphanumeric characters, '-', '_' or '.'" }));
  if (secret['type'] === 'kubernetes.io/service-account-token' && !secret.metadata.annotations?.['kubernetes.io/service-account.name']) {
    errors.push({ type: 'Required', field: 'metadata.annotations[kubernetes.io/service-account.name]' });
  }
  return errors;
}

/** Decoded `data` of a Secret (utf-8). */
export function secretData(secret: KubeObject): Record<string, string> {
  const data = isJsonObject(secret['data']) ? secret['data'] : {};
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(String(v), 'base64').toString('utf8')]));
}

/**
 * Secret strategy: stringData folded in, type immutable.
 * @see https://kubernetes.io/docs/concepts/configuration/secret/
 */
export const SECRET_STRATEGY: ResourceStrategy = {
  defaults: normalizeSecret,
  validateCreate: validateSecret,
  validateUpdate(secret, old) {
    const errors = validateSecret(secret);
    if (secret['type'] !== old['type']) {
      errors.push({ type: 'Invalid', field: 'type', value: secret['type'], detail: 'field is immutable' });
    }
    return errors;
  },
};
