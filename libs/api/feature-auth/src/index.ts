export * from './lib/auth.resolver';
export * from './lib/user.service';
export * from './lib/session-tokens';
export * from './lib/user.type';
export * from './lib/audit-log.resolver';
export * from './lib/audit-entry.type';
