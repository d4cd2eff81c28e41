export * from './generated/operations';
export * from './generated/agent-operation-texts';
