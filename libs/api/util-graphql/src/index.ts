export * from './lib/errors';
export * from './lib/context';
export * from './lib/auth-checker';
export * from './lib/audit-middleware';
export * from './lib/validation';
export * from './lib/query-limits';
export * from './lib/pubsub';
export * from './lib/enums';
