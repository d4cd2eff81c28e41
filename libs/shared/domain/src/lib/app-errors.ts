import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';
import type { ApiErrorCode } from './api-error-codes';
import type { Role } from './roles';

/**
 * Error codes clients can rely on: the shared list (api-error-codes.ts). The API sends them as
 * GraphQL `extensions.code` (`libs/api/util-graphql`'s `graphQLErrorOf` is the one place that maps them).
 */
export type ErrorCode = ApiErrorCode;

/**
 * An error meant for the client, whatever carries it (GraphQL, an HTTP route, the CLI): a
 * literal code, a message that says what to fix, and details. It knows no transport; stores,
 * services and resolvers throw it and the edge translates it.
 */
export class AppError extends Error {
  /**
   * What the client gets beside the message: the caller's details, `code`, and for a coded
   * message its `messageCode` and `messageParams`, so clients show it in their language.
   */
  readonly extensions: Readonly<Record<string, unknown>>;

  /**
   * `text` is a coded message, never a bare string: the compiler refuses English here, so every
   * client can show the error in its user's language (`app-errors.types.spec.ts` keeps it so).
   */
  constructor(code: ErrorCode, text: CodedText, extensions: Record<string, unknown> = {}, cause?: unknown) {
    super(text.message, cause instanceof Error ? { cause } : undefined);
    this.name = 'AppError';
    this.extensions = { ...extensions, messageCode: text.code, messageParams: text.params, code };
  }

  get code(): ErrorCode {
    return this.extensions['code'] as ErrorCode;
  }

  /** The coded message, to nest in another one (`{ reason: error.text }`). */
  get text(): Message {
    return { code: this.extensions['messageCode'] as Message['code'], params: this.extensions['messageParams'] as Message['params'] };
  }
}

/** A field was wrong; the message starts with the field's name. */
export class BadUserInputError extends AppError {
  /** A coded `problem` names no field in its text; clients put it beside the field. */
  constructor(field: string, problem: CodedText) {
    super('BAD_USER_INPUT', message('error.badInput', { field, problem: bare(problem) }), { field, problemCode: problem.code, problemParams: problem.params });
  }
}

export class ConflictError extends AppError {
  constructor(text: CodedText, extensions: Record<string, unknown> = {}) {
    super('CONFLICT', text, extensions);
  }
}

/**
 * A field's value clashes with what exists (a host name already taken): CONFLICT, with the field
 * and its coded problem as {@link BadUserInputError} has them, so clients show it beside the field.
 */
export class FieldConflictError extends ConflictError {
  constructor(field: string, problem: CodedText, extensions: Record<string, unknown> = {}) {
    super(message('error.badInput', { field, problem: bare(problem) }), { ...extensions, field, problemCode: problem.code, problemParams: problem.params });
  }
}

export class NotFoundError extends AppError {
  constructor(kind: string, id: string) {
    super('NOT_FOUND', message('error.notFound', { kind, id }), { kind });
  }
}

export class UnauthenticatedError extends AppError {
  constructor(text: CodedText = message('error.unauthenticated')) {
    super('UNAUTHENTICATED', text);
  }
}

export class ForbiddenError extends AppError {
  constructor(required: Role, held: Role) {
    super('FORBIDDEN', message('error.forbidden', { required, held }), { requiredRole: required });
  }
}

/** The request is valid but the target is not in a state that allows it. */
export class PreconditionError extends AppError {
  constructor(text: CodedText, extensions: Record<string, unknown> = {}) {
    super('FAILED_PRECONDITION', text, extensions);
  }
}
