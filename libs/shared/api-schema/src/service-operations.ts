import * as operations from './generated/operations';

/** The names of the operations a generated document holds (none for anything else the module exports). */
function operationNames(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || (value as { kind?: unknown }).kind !== 'Document') {
    return [];
  }
  const definitions = (value as { readonly definitions: ReadonlyArray<{ readonly kind: string; readonly name?: { readonly value: string } }> }).definitions;
  return definitions.flatMap((definition) => (definition.kind === 'OperationDefinition' && definition.name ? [definition.name.value] : []));
}

/**
 * The name of every operation in `operations/*.graphql` (the console's, the CLI's, the agent's and
 * the tests' support layer's), read from the generated documents as {@link AGENT_OPERATION_TEXTS}
 * is, so an operation added there is on this list without an edit. The API labels its GraphQL
 * metrics with these names only: any other name a client sends is `other`.
 */
export const SERVICE_OPERATION_NAMES: ReadonlySet<string> = new Set(Object.values(operations as Record<string, unknown>).flatMap(operationNames));
