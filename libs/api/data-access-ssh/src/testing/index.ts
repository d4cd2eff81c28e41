export * from './ed25519-key-pair';
export * from './played-ssh-host';
