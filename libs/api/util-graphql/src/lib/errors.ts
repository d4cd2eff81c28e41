import { GraphQLError } from 'graphql';
import type { Role } from '@ccos/shared/domain';

/** Error codes clients can rely on (`extensions.code`). */
export type ErrorCode =
  | 'BAD_USER_INPUT'
  | 'CONFLICT'
  | 'NOT_FOUND'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'FAILED_PRECONDITION'
  | 'HOST_KEY_CHANGED'
  | 'UNAVAILABLE'
  /** A cluster's API server did not answer (now, or recently: the service remembers it for a few seconds). */
  | 'CLUSTER_UNREACHABLE'
  /** A per-run or per-request limit was reached (e.g. events per install run). */
  | 'LIMIT_EXCEEDED'
  /** Too many failed sign-ins for this user from this address, or from this address at all; `retryAfterSeconds` says when to try again. */
  | 'LOGIN_THROTTLED'
  /** Too many sign-ins are being checked at once; `retryAfterSeconds` says when to try again. */
  | 'LOGIN_BUSY'
  | 'INTERNAL_SERVER_ERROR';

/** An error meant for the client: a literal code and a message that says what to fix. */
export class AppError extends GraphQLError {
  constructor(code: ErrorCode, message: string, extensions: Record<string, unknown> = {}, cause?: unknown) {
    super(message, { extensions: { ...extensions, code }, originalError: cause instanceof Error ? cause : undefined });
    this.name = 'AppError';
  }

  get code(): ErrorCode {
    return this.extensions['code'] as ErrorCode;
  }
}

/** A field was wrong; the message starts with the field's name. */
export class BadUserInputError extends AppError {
  constructor(field: string, problem: string) {
    super('BAD_USER_INPUT', `${field} ${problem}`, { field });
  }
}

export class ConflictError extends AppError {
  constructor(message: string, extensions: Record<string, unknown> = {}) {
    super('CONFLICT', message, extensions);
  }
}

export class NotFoundError extends AppError {
  constructor(kind: string, id: string) {
    super('NOT_FOUND', `${kind} ${id} does not exist`, { kind });
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = 'sign in first: this operation needs a valid bearer token') {
    super('UNAUTHENTICATED', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(required: Role, held: Role) {
    super('FORBIDDEN', `this operation needs the ${required} role; you are ${held}`, { requiredRole: required });
  }
}

/** The request is valid but the target is not in a state that allows it. */
export class PreconditionError extends AppError {
  constructor(message: string, extensions: Record<string, unknown> = {}) {
    super('FAILED_PRECONDITION', message, extensions);
  }
}
