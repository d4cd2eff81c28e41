export * from './secret-ledger';
