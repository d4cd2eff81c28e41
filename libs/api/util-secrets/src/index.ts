export * from './lib/secret-box';
export * from './lib/password-hash';
export * from './lib/opaque-token';
