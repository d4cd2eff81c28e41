export * from './lib/removal.resolver';
export * from './lib/removal.service';
export * from './lib/removal-run.type';
export * from './lib/removal-preview.type';
export * from './lib/remove-node.input';
export * from './lib/removal-ports';
export * from './lib/removal-runner';
export * from './lib/removal-feature';
export { HOST_CLEAN_PATHS } from './lib/host-commands';
