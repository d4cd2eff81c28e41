export * from './generated/operations';
