export * from './lib/artifact-catalog';
export * from './lib/artifact-routes';
export * from './lib/byte-range';
