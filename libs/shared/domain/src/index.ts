export * from './lib/node-lifecycle';
export * from './lib/node-removal';
export * from './lib/install-steps';
export * from './lib/validation';
export * from './lib/roles';
export * from './lib/csr-policy';
export * from './lib/bulk-hosts';
export * from './lib/node-batch';
