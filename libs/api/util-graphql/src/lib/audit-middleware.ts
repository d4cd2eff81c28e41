import type { GraphQLResolveInfo } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { message } from '@ccos/shared/messages';
import { actorOf, type RequestContext } from './context';
import { AppError } from './errors';
import { redactSecretArguments } from './secret-arguments';

/**
 * How an audited action ended: done, tried and failed, or refused to the caller. PENDING is an
 * entry written before its action whose end was never recorded (the service stopped meanwhile,
 * or the entry could not be completed).
 */
export const AUDIT_RESULTS = ['SUCCESS', 'FAILURE', 'DENIED', 'PENDING'] as const;
export type AuditResult = (typeof AUDIT_RESULTS)[number];

export interface AuditEntry {
  actor: string;
  action: string;
  targetType: string;
  targetId: string | null;
  result: AuditResult;
  detail: Record<string, unknown>;
  requestId: string | null;
}

/** Records what happened, after the fact (refusals, controller decisions). */
export interface AuditSink {
  record(entry: AuditEntry): Promise<void>;
}

/** Writes an entry before its action and completes it afterwards. */
export interface AuditTrail extends AuditSink {
  /**
   * Stores the entry as PENDING and returns its id. Throws when it cannot be stored: the caller
   * then does not act, so nothing happens without its entry.
   */
  begin(entry: Omit<AuditEntry, 'result'>): Promise<string>;
  /** Records how the action ended. A failure is logged; the entry then stays PENDING. */
  complete(id: string, result: Exclude<AuditResult, 'PENDING'>, extra: Record<string, unknown>): Promise<void>;
}

/** Codes that mean the caller was refused, not that the action was tried and failed. */
const DENIED_CODES: ReadonlySet<string> = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'LOGIN_THROTTLED', 'LOGIN_BUSY']);

/** Mutations the agent calls many times per run; their events are their own record. */
const NOT_AUDITED = new Set(['reportStep', 'reportSteps']);

/** The refusal of an action whose audit entry could not be written. */
export class AuditUnavailableError extends AppError {
  constructor(cause: unknown) {
    super('UNAVAILABLE', message('error.auditUnavailable'), {}, cause);
  }
}

/**
 * One audit entry per mutation: who, what, on which target, and how it ended. The entry is
 * written before the mutation runs and completed afterwards, so a mutation whose entry cannot be
 * written does not run at all (a transaction could not cover SSH or the cluster API). Arguments
 * marked `@secret` in the schema are stored as `[redacted]`.
 */
export function createAuditMiddleware(audit: AuditTrail): MiddlewareFn<RequestContext> {
  return async ({ context, info, args }, next) => {
    if (info.parentType.name !== 'Mutation' || NOT_AUDITED.has(info.fieldName)) {
      return next();
    }
    let id: string;
    try {
      id = await audit.begin({
        actor: actorOf(context) === 'anonymous' && typeof args['username'] === 'string' ? String(args['username']) : actorOf(context),
        action: info.fieldName,
        targetType: targetTypeOf(info),
        targetId: targetOf(args),
        detail: { args: auditedArguments(info, args) },
        requestId: context.requestId,
      });
    } catch (error) {
      context.logger.error({ err: error, action: info.fieldName }, 'refused an action: its audit entry could not be written');
      throw new AuditUnavailableError(error);
    }
    try {
      const value: unknown = await next();
      await audit.complete(id, 'SUCCESS', {});
      return value;
    } catch (error) {
      const code = error instanceof AppError ? error.code : 'INTERNAL_SERVER_ERROR';
      await audit.complete(id, DENIED_CODES.has(code) ? 'DENIED' : 'FAILURE', { code });
      throw error;
    }
  };
}

/** A field's arguments as the audit log keeps them: `@secret` values replaced. */
export function auditedArguments(info: Pick<GraphQLResolveInfo, 'parentType' | 'fieldName'>, args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return redactSecretArguments(info.parentType.getFields()[info.fieldName]?.args ?? [], args);
}

/** What kind of thing a mutation acts on: the type it returns (`Node`, `Cluster`, `Csr` …). */
export function targetTypeOf(info: { readonly returnType: { toString(): string } }): string {
  return info.returnType.toString().replace(/[![\]]/g, '');
}

/** The id a mutation acts on, as far as its arguments tell. */
export function targetOf(args: Record<string, unknown>): string | null {
  for (const key of ['id', 'nodeId', 'clusterId', 'name', 'hostname', 'username']) {
    if (typeof args[key] === 'string') {
      return args[key] as string;
    }
  }
  const input = args['input'];
  if (input && typeof input === 'object') {
    return targetOf(input as Record<string, unknown>);
  }
  return null;
}
