export * from './lib/errors';
export * from './lib/context';
export * from './lib/auth-checker';
export * from './lib/audit-middleware';
export * from './lib/validation';
export * from './lib/query-limits';
export * from './lib/input-marks';
export * from './lib/secret-arguments';
export * from './lib/input-guard';
export * from './lib/request-secrets';
export * from './lib/pubsub';
export * from './lib/enums';
export * from './lib/topics';
export * from './lib/label-types';
export * from './lib/ssh-credentials.input';
// The Node type is shared: feature-nodes shows it, feature-installs resolves installRuns on it.
export * from './lib/node.type';
export * from './lib/host-verdict.type';
