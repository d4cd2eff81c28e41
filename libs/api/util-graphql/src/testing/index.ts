export * from './secret-ledger';
export * from './refusal';
