import type { AuthChecker } from 'type-graphql';
import { isRole, roleAllows } from '@ccos/shared/domain';
import { type AuditSink, targetOf, targetTypeOf } from './audit-middleware';
import type { RequestContext } from './context';
import { ForbiddenError, UnauthenticatedError } from './errors';

/**
 * The one auth checker: `@Authorized('OPERATOR')` lets OPERATOR and ADMIN through.
 * Refusals of mutations are written to the audit log as DENIED.
 */
export function createAuthChecker(audit: AuditSink): AuthChecker<RequestContext, string> {
  return async ({ context, info, args }, roles) => {
    const required = roles.find(isRole) ?? 'VIEWER';
    const user = context.user;
    const refusal = !user ? new UnauthenticatedError() : !roleAllows(user.role, required) ? new ForbiddenError(required, user.role) : null;
    if (!refusal) {
      return true;
    }
    if (info.parentType.name === 'Mutation') {
      await audit.record({
        actor: user?.username ?? 'anonymous',
        action: info.fieldName,
        targetType: targetTypeOf(info),
        targetId: targetOf(args),
        result: 'DENIED',
        detail: { code: refusal.code },
        requestId: context.requestId,
      });
    }
    throw refusal;
  };
}
