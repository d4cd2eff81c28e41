export * from './test-database';
export * from './recording-jobs';
