export * from './lib/ssh-target';
export * from './lib/ssh-errors';
export * from './lib/host-key';
export * from './lib/shell-quote';
export { displayCommand, type RemoteCommandOptions } from './lib/remote-command';
export * from './lib/remote-script';
export { DEFAULT_OUTPUT_TAIL_BYTES } from './lib/output-tail';
