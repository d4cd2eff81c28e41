import type { MiddlewareFn } from 'type-graphql';
import { actorOf, type RequestContext } from './context';
import { AppError } from './errors';

/** How an audited action ended: done, tried and failed, or refused to the caller. */
export const AUDIT_RESULTS = ['SUCCESS', 'FAILURE', 'DENIED'] as const;
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

export interface AuditSink {
  record(entry: AuditEntry): Promise<void>;
}

/** Argument names whose values are never written anywhere. */
const SECRET_ARGUMENTS = new Set(['password', 'privateKey', 'passphrase', 'kubeconfig', 'token', 'caCert', 'newPassword']);

/** Codes that mean the caller was refused, not that the action was tried and failed. */
const DENIED_CODES: ReadonlySet<string> = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'LOGIN_THROTTLED', 'LOGIN_BUSY']);

/** Mutations the agent calls many times per run; their events are their own record. */
const NOT_AUDITED = new Set(['reportStep']);

/**
 * Writes one audit entry per mutation: who, what, on which target, and how it ended.
 * Secret arguments are replaced by `[redacted]`.
 */
export function createAuditMiddleware(audit: AuditSink): MiddlewareFn<RequestContext> {
  return async ({ context, info, args }, next) => {
    if (info.parentType.name !== 'Mutation' || NOT_AUDITED.has(info.fieldName)) {
      return next();
    }
    const entry = (result: AuditEntry['result'], extra: Record<string, unknown>): AuditEntry => ({
      actor: actorOf(context) === 'anonymous' && typeof args['username'] === 'string' ? String(args['username']) : actorOf(context),
      action: info.fieldName,
      targetType: targetTypeOf(info),
      targetId: targetOf(args),
      result,
      detail: { args: redactSecrets(args), ...extra },
      requestId: context.requestId,
    });
    try {
      const value: unknown = await next();
      await audit.record(entry('SUCCESS', {}));
      return value;
    } catch (error) {
      const code = error instanceof AppError ? error.code : 'INTERNAL_SERVER_ERROR';
      await audit.record(entry(DENIED_CODES.has(code) ? 'DENIED' : 'FAILURE', { code }));
      throw error;
    }
  };
}

export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(redactSecrets);
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      // A secret that was not given stays null, so the entry still tells which kind of credential was used.
      Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, SECRET_ARGUMENTS.has(key) && inner != null ? '[redacted]' : redactSecrets(inner)]),
    );
  }
  return value;
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
