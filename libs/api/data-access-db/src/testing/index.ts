export * from './test-database';
export * from './recording-jobs';
export * from './cuttable-postgres-path';
export * from './migrated-database';
