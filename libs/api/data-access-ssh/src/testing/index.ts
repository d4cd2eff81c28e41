export * from './ed25519-key-pair';
