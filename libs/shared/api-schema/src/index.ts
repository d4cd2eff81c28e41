export * from './generated/operations';
export * from './generated/agent-operation-texts';
export { AGENT_OPERATION_TEXTS } from './agent-operations';
export { SERVICE_OPERATION_NAMES } from './service-operations';
