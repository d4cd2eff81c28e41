import type { FieldError } from '../api-error';
import { isJsonObject, type JsonObject, type JsonValue } from '../json-value';
import { kubeTime, type KubeObject } from '../kube-object';
import type { ResourceStrategy, SubresourceWrite } from '../resource-definition';
import { KNOWN_USAGES, parseCertificateRequest } from '../signer';
import { fieldAt } from './field-labels';

export const CSR_FIELD_LABELS = { 'spec.signerName': fieldAt('spec.signerName', '') };

const APPROVAL_TYPES = ['Approved', 'Denied'];
const EXCLUSIVE_TYPES = ['Approved', 'Denied', 'Failed'];
const SIGNER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9][-A-Za-z0-9_./]*$/;

/** Conditions of a CSR as a list of objects. */
export function csrConditions(csr: KubeObject): JsonObject[] {
  const list = csr.status?.['conditions'];
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

/** Whether a CSR carries a condition of the given type with status True. */
export function hasCondition(csr: KubeObject, type: string): boolean {
  return csrConditions(csr).some((c) => c['type'] === type && c['status'] === 'True');
}

/** The PEM text of `spec.request` (base64 in JSON). */
export function requestPem(csr: KubeObject): string {
  const request = csr.spec?.['request'];
  return typeof request === 'string' ? Buffer.from(request, 'base64').toString('utf8') : '';
}

function validateSpec(csr: KubeObject): FieldError[] {
  const spec = csr.spec ?? {};
  const errors: FieldError[] = [];
  const request = spec['request'];
  if (typeof request !== 'string' || request === '') {
    errors.push({ type: 'Required', field: 'spec.request' });
  } else {
    try {
      parseCertificateRequest(requestPem(csr));
    } catch (error) {
      errors.push({ type: 'Invalid', field: 'spec.request', value: '<request data>', detail: error instanceof Error ? error.message : String(error) });
    }
  }
  const signerName = spec['signerName'];
  if (typeof signerName !== 'string' || signerName === '') {
    errors.push({ type: 'Required', field: 'spec.signerName' });
  } else if (signerName === 'kubernetes.io/legacy-unknown') {
    errors.push({ type: 'Invalid', field: 'spec.signerName', value: signerName, detail: 'the legacy signerName is not allowed via this API version' });
  } else if (!SIGNER_NAME.test(signerName)) {
    errors.push({ type: 'Invalid', field: 'spec.signerName', value: signerName, detail: 'should be a domain with at least two segments separated by dots, followed by a path' });
  }
  const usages = spec['usages'];
  if (!Array.isArray(usages) || usages.length === 0) {
    errors.push({ type: 'Required', field: 'spec.usages' });
  } else {
    usages.forEach((u, i) => {
      if (typeof u !== 'string' || !KNOWN_USAGES.includes(u)) {
        errors.push({ type: 'NotSupported', field: `spec.usages[${i}]`, value: u, detail: `supported values: ${KNOWN_USAGES.map((k) => JSON.stringify(k)).join(', ')}` });
      }
    });
  }
  const expiration = spec['expirationSeconds'];
  if (expiration !== undefined && (typeof expiration !== 'number' || expiration < 600)) {
    errors.push({ type: 'Invalid', field: 'spec.expirationSeconds', value: expiration, detail: 'may not specify a duration less than 600 seconds (10 minutes)' });
  }
  return errors;
}

/**
 * Condition rules of certificates/v1: a type is required, Approved/Denied/Failed at most once and
 * only with status "True", Approved and Denied mutually exclusive, and once present never removed.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/certificates/validation/validation.go
 */
export function validateCsrConditions(csr: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  csrConditions(csr).forEach((c, i) => {
    const type = typeof c['type'] === 'string' ? c['type'] : '';
    const status = c['status'];
    const at = `status.conditions[${i}]`;
    if (type === '') {
      errors.push({ type: 'Required', field: `${at}.type` });
    }
    if (status === undefined || status === '') {
      errors.push({ type: 'Required', field: `${at}.status` });
    } else if (EXCLUSIVE_TYPES.includes(type) && status !== 'True') {
      errors.push({ type: 'NotSupported', field: `${at}.status`, value: status, detail: 'supported values: "True"' });
    } else if (status !== 'True' && status !== 'False' && status !== 'Unknown') {
      errors.push({ type: 'NotSupported', field: `${at}.status`, value: status, detail: 'supported values: "False", "True", "Unknown"' });
    }
    if (EXCLUSIVE_TYPES.includes(type)) {
      if (seen.has(type)) {
        errors.push({ type: 'Duplicate', field: `${at}.type`, value: type });
      }
      seen.add(type);
    }
    if (type === 'Approved') {
      approved = true;
      if (denied) {
        errors.push({ type: 'Invalid', field: `${at}.type`, value: type, detail: 'Approved and Denied conditions are mutually exclusive' });
      }
    }
    if (type === 'Denied') {
      denied = true;
      if (approved) {
        errors.push({ type: 'Invalid', field: `${at}.type`, value: type, detail: 'Approved and Denied conditions are mutually exclusive' });
      }
    }
  });
  if (old) {
    for (const type of EXCLUSIVE_TYPES) {
      if (hasCondition(old, type) && !hasCondition(csr, type)) {
        errors.push({ type: 'Forbidden', field: 'status.conditions', detail: `updates may not remove a condition of type "${type}"` });
      }
    }
  }
  return errors;
}

function validateCertificate(csr: KubeObject, old: KubeObject): FieldError[] {
  const cert = csr.status?.['certificate'];
  const oldCert = old.status?.['certificate'];
  if (cert === undefined || cert === '' || cert === oldCert) {
    return [];
  }
  if (typeof oldCert === 'string' && oldCert !== '') {
    return [{ type: 'Forbidden', field: 'status.certificate', detail: 'updates may not modify existing certificate content' }];
  }
  const pem = typeof cert === 'string' ? Buffer.from(cert, 'base64').toString('utf8') : '';
  if (!/-----BEGIN CERTIFICATE-----/.test(pem)) {
    return [{ type: 'Invalid', field: 'status.certificate', value: '<certificate data>', detail: 'must contain at least one CERTIFICATE PEM block' }];
  }
  if (!hasCondition(csr, 'Approved')) {
    return [{ type: 'Forbidden', field: 'status.certificate', detail: 'certificate can only be set on an approved CertificateSigningRequest' }];
  }
  if (hasCondition(csr, 'Failed') || hasCondition(csr, 'Denied')) {
    return [{ type: 'Forbidden', field: 'status.certificate', detail: 'certificate cannot be set on a denied or failed CertificateSigningRequest' }];
  }
  return [];
}

function stampConditions(conditions: JsonValue | undefined, old: KubeObject, at: Date): JsonValue | undefined {
  if (!Array.isArray(conditions)) {
    return conditions;
  }
  const now = kubeTime(at);
  return conditions.map((c) => {
    if (!isJsonObject(c)) {
      return c;
    }
    const previous = csrConditions(old).find((o) => o['type'] === c['type']);
    const stamped: JsonObject = { ...c };
    if (!stamped['lastUpdateTime']) {
      stamped['lastUpdateTime'] = now;
    }
    if (!stamped['lastTransitionTime']) {
      stamped['lastTransitionTime'] = previous && previous['status'] === c['status'] && typeof previous['lastTransitionTime'] === 'string' ? previous['lastTransitionTime'] : now;
    }
    return stamped;
  });
}

/** `/approval`: only the conditions change; the certificate stays as stored. */
const APPROVAL_WRITE: SubresourceWrite = {
  merge(incoming, old, ctx) {
    const status: JsonObject = { ...(old.status ?? {}) };
    const conditions = stampConditions(incoming.status?.['conditions'], old, ctx.now);
    if (conditions === undefined) {
      delete status['conditions'];
    } else {
      status['conditions'] = conditions;
    }
    return { ...old, metadata: { ...old.metadata }, status };
  },
  validate: validateCsrConditions,
};

/** `/status`: the certificate and non-approval conditions; Approved/Denied stay as stored. */
const CSR_STATUS_WRITE: SubresourceWrite = {
  merge(incoming, old, ctx) {
    const status: JsonObject = { ...(incoming.status ?? {}) };
    const incomingConditions = Array.isArray(status['conditions']) ? status['conditions'].filter(isJsonObject) : [];
    const kept = csrConditions(old).filter((c) => APPROVAL_TYPES.includes(String(c['type'])));
    const merged = [...kept, ...incomingConditions.filter((c) => !APPROVAL_TYPES.includes(String(c['type'])))];
    const stamped = stampConditions(merged, old, ctx.now);
    if (Array.isArray(stamped) && stamped.length > 0) {
      status['conditions'] = stamped;
    } else {
      delete status['conditions'];
    }
    return { ...old, metadata: { ...old.metadata }, status };
  },
  validate: (csr, old) => [...validateCsrConditions(csr, old), ...validateCertificate(csr, old)],
};

/**
 * CertificateSigningRequest strategy: the requester's identity is written from the authenticated
 * caller (never from the body), status starts empty, the spec is immutable, approval and
 * certificate are written only through `/approval` and `/status`.
 * @see https://github.com/kubernetes/kubernetes/blob/master/pkg/registry/certificates/certificates/strategy.go
 */
export const CSR_STRATEGY: ResourceStrategy = {
  prepareForCreate(csr, ctx) {
    const spec = (csr.spec ??= {});
    delete spec['username'];
    delete spec['uid'];
    delete spec['groups'];
    delete spec['extra'];
    spec['username'] = ctx.user.username;
    if (ctx.user.uid) {
      spec['uid'] = ctx.user.uid;
    }
    spec['groups'] = [...ctx.user.groups];
    if (ctx.user.extra && Object.keys(ctx.user.extra).length > 0) {
      spec['extra'] = ctx.user.extra;
    }
    csr.status = {};
  },
  validateCreate: validateSpec,
  prepareForUpdate(csr, old) {
    csr.spec = old.spec;
    csr.status = old.status;
  },
  subresourceWrites: { approval: APPROVAL_WRITE, status: CSR_STATUS_WRITE },
  listStrategies: { 'status.conditions': { strategy: 'replace' } },
};
