export { createAuthFeature, type AuthFeature, type AuthFeatureOptions } from './lib/auth-feature';
export { AuthResolver } from './lib/auth.resolver';
export { UserResolver } from './lib/user.resolver';
export { SessionResolver } from './lib/session.resolver';
export { AuditLogResolver } from './lib/audit-log.resolver';
export type { LoginOutcome, UserService } from './lib/user.service';
export type { SessionService } from './lib/session.service';
