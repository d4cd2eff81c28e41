export * from './lib/artifact-catalog';
export * from './lib/artifact-routes';
export * from './lib/artifact-set-store';
export * from './lib/artifact-set.resolver';
export * from './lib/artifact-set.type';
export * from './lib/artifact-upload-route';
export * from './lib/byte-range';
export * from './lib/cluster-artifacts';
