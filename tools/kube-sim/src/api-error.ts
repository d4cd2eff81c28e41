import type { JsonObject } from './json-value';

/** A `metav1.Status` object, the body of every API error. */
export interface Status extends JsonObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: JsonObject;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  code: number;
}

/** Identifies the resource an error is about, as `details` of a Status. */
export interface ErrorSubject {
  /** Plural resource name (`nodes`). */
  resource: string;
  /** API group, empty for core. */
  group: string;
  /** Kind, used by validation errors (`Node`). */
  kind?: string;
  name?: string;
}

/** One field problem, as the API server's field.Error. */
export interface FieldError {
  type: 'Required' | 'Invalid' | 'Forbidden' | 'Duplicate' | 'NotSupported';
  field: string;
  value?: unknown;
  detail?: string;
}

/** An API failure carrying the exact Status the real server would send. */
export class ApiError extends Error {
  constructor(readonly status: Status, readonly headers: Record<string, string> = {}) {
    super(status.message);
    this.name = 'ApiError';
  }
}

/** Builds a failure Status. */
export function failureStatus(code: number, reason: string, message: string, details?: JsonObject): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) {
    status['details'] = details;
  }
  return status;
}

/** `nodes` or `certificatesigningrequests.certificates.k8s.io`, as in the real messages. */
export function qualifiedResource(subject: ErrorSubject): string {
  return subject.group ? `${subject.resource}.${subject.group}` : subject.resource;
}

function subjectDetails(subject: ErrorSubject): JsonObject {
  const details: JsonObject = {};
  if (subject.name !== undefined) {
    details['name'] = subject.name;
  }
  if (subject.group) {
    details['group'] = subject.group;
  }
  details['kind'] = subject.resource;
  return details;
}

/**
 * 404 for a named object.
 * @see https://github.com/kubernetes/apimachinery/blob/master/pkg/api/errors/errors.go
 */
export function notFound(subject: ErrorSubject): ApiError {
  return new ApiError(failureStatus(404, 'NotFound', `${qualifiedResource(subject)} "${subject.name ?? ''}" not found`, subjectDetails(subject)));
}

/** 404 for a path the server does not serve. */
export function resourceNotFound(): ApiError {
  return new ApiError(failureStatus(404, 'NotFound', 'the server could not find the requested resource', {}));
}

/** 409 when creating an object whose name is taken. */
export function alreadyExists(subject: ErrorSubject): ApiError {
  return new ApiError(failureStatus(409, 'AlreadyExists', `${qualifiedResource(subject)} "${subject.name ?? ''}" already exists`, subjectDetails(subject)));
}

/** 409 for a stale resourceVersion or a failed precondition. */
export function conflict(subject: ErrorSubject, why = 'the object has been modified; please apply your changes to the latest version and try again'): ApiError {
  return new ApiError(
    failureStatus(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(subject)} "${subject.name ?? ''}": ${why}`, subjectDetails(subject)),
  );
}

function quote(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value);
  }
  if (value === undefined) {
    return 'null';
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function fieldErrorBody(error: FieldError): string {
  switch (error.type) {
    case 'Required':
      return error.detail ? `Required value: ${error.detail}` : 'Required value';
    case 'Forbidden':
      return error.detail ? `Forbidden: ${error.detail}` : 'Forbidden';
    case 'Duplicate':
      return `Duplicate value: ${quote(error.value)}`;
    case 'NotSupported':
      return `Unsupported value: ${quote(error.value)}${error.detail ? `: ${error.detail}` : ''}`;
    case 'Invalid':
      return `Invalid value: ${quote(error.value)}${error.detail ? `: ${error.detail}` : ''}`;
  }
}

const CAUSE_REASONS: Record<FieldError['type'], string> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  Duplicate: 'FieldValueDuplicate',
  NotSupported: 'FieldValueNotSupported',
};

/**
 * 422 Invalid with one cause per field error, message formatted like field.ErrorList.
 * @see https://github.com/kubernetes/apimachinery/blob/master/pkg/api/errors/errors.go (NewInvalid)
 */
export function invalid(subject: ErrorSubject, errors: readonly FieldError[]): ApiError {
  const kind = subject.group ? `${subject.kind ?? subject.resource}.${subject.group}` : (subject.kind ?? subject.resource);
  const parts = errors.map((e) => `${e.field}: ${fieldErrorBody(e)}`);
  const list = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  const details: JsonObject = {
    name: subject.name ?? '',
    ...(subject.group ? { group: subject.group } : {}),
    kind: subject.kind ?? subject.resource,
    causes: errors.map((e) => ({ reason: CAUSE_REASONS[e.type], message: fieldErrorBody(e), field: e.field })),
  };
  return new ApiError(failureStatus(422, 'Invalid', `${kind} "${subject.name ?? ''}" is invalid: ${list}`, details));
}

/** 400 BadRequest. */
export function badRequest(message: string): ApiError {
  return new ApiError(failureStatus(400, 'BadRequest', message));
}

/** 401, the answer to missing or bad credentials. */
export function unauthorized(): ApiError {
  return new ApiError(failureStatus(401, 'Unauthorized', 'Unauthorized'));
}

/** 403 Forbidden for an operation the server refuses regardless of who asks. */
export function forbidden(subject: ErrorSubject, why: string): ApiError {
  return new ApiError(
    failureStatus(403, 'Forbidden', `${qualifiedResource(subject)} "${subject.name ?? ''}" is forbidden: ${why}`, subjectDetails(subject)),
  );
}

/** 405 for a verb a resource does not support. */
export function methodNotAllowed(action: string, subject: ErrorSubject): ApiError {
  return new ApiError(
    failureStatus(405, 'MethodNotAllowed', `${action} is not supported on resources of kind "${qualifiedResource(subject)}"`, subjectDetails(subject)),
  );
}

/** 415 for a body type the endpoint does not accept. */
export function unsupportedMediaType(contentType: string, accepted: readonly string[]): ApiError {
  return new ApiError(
    failureStatus(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`, {}),
    { 'x-sim-content-type': contentType },
  );
}

/** 406 when no acceptable representation exists. */
export function notAcceptable(accepted: readonly string[]): ApiError {
  return new ApiError(failureStatus(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`, {}));
}

/** 410 Expired, for a watch or continue token that is older than the kept history. */
export function expired(message: string): ApiError {
  return new ApiError(failureStatus(410, 'Expired', message));
}

/**
 * 504 for a list or watch at a resourceVersion the server has not reached (ResourceVersionTooLarge).
 * @see https://github.com/kubernetes/apiserver/blob/master/pkg/storage/errors.go
 */
export function tooLargeResourceVersion(wanted: number, current: number): ApiError {
  return new ApiError(
    failureStatus(504, 'Timeout', `Timeout: Too large resource version: ${wanted}, current: ${current}`, {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),
  );
}

/** 500 InternalError. */
export function internalError(message: string): ApiError {
  return new ApiError(failureStatus(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }));
}
