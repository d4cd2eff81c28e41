export * from './generated/operations';
export * from './generated/agent-operation-texts';
export * from './error-codes';
