import {
  type DocumentNode,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLSchema,
  TypeInfo,
  getNullableType,
  isInputObjectType,
  isListType,
  valueFromASTUntyped,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { isSecretInput } from './input-marks';

/** What a secret's value is replaced with in audit entries. */
export const REDACTED_VALUE = '[redacted]';

/**
 * The arguments of one field with every value marked `@secret` (however deep in input objects and
 * lists) replaced by `[redacted]`. A secret that was not given stays null, so an audit entry
 * still tells which kind of credential was used.
 */
export function redactSecretArguments(definitions: readonly GraphQLArgument[], args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    const definition = definitions.find((candidate) => candidate.name === name);
    out[name] = !definition ? value : isSecretInput(definition) && value != null ? REDACTED_VALUE : redactTyped(definition.type, value);
  }
  return out;
}

function redactTyped(type: GraphQLInputType, value: unknown): unknown {
  const nullable = getNullableType(type);
  if (value == null) {
    return value;
  }
  if (isListType(nullable)) {
    return Array.isArray(value) ? value.map((item) => redactTyped(nullable.ofType, item)) : redactTyped(nullable.ofType, value);
  }
  if (isInputObjectType(nullable) && typeof value === 'object') {
    const fields = nullable.getFields();
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, inner]) => {
        const field = fields[key];
        return [key, !field ? inner : isSecretInput(field) && inner != null ? REDACTED_VALUE : redactTyped(field.type, inner)];
      }),
    );
  }
  return value;
}

/**
 * Every string a request sends in a position marked `@secret` — as a literal in the document or
 * through a variable, whether or not it has the right type — so that no message or log line of
 * that request can repeat it.
 */
export function secretValuesInRequest(schema: GraphQLSchema, document: DocumentNode, variables: Readonly<Record<string, unknown>> | null | undefined): string[] {
  const found: string[] = [];
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Argument(node) {
        const definition = typeInfo.getArgument();
        if (definition) {
          collectTyped(definition.type, isSecretInput(definition), valueFromASTUntyped(node.value, (variables ?? undefined) as Record<string, unknown> | undefined), found, 0);
        }
      },
    }),
  );
  return found;
}

const MAX_DEPTH = 64;

function collectTyped(type: GraphQLInputType, secret: boolean, value: unknown, found: string[], depth: number): void {
  if (value == null || depth > MAX_DEPTH) {
    return;
  }
  if (secret) {
    collectStrings(value, found, depth);
    return;
  }
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      collectTyped(nullable.ofType, false, item, found, depth + 1);
    }
  } else if (isInputObjectType(nullable) && typeof value === 'object' && !Array.isArray(value)) {
    const fields = nullable.getFields();
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      const field = fields[key];
      if (field) {
        collectTyped(field.type, isSecretInput(field), inner, found, depth + 1);
      }
    }
  }
}

function collectStrings(value: unknown, found: string[], depth: number): void {
  if (typeof value === 'string') {
    found.push(value);
  } else if (value && typeof value === 'object' && depth <= MAX_DEPTH) {
    for (const inner of Object.values(value as Record<string, unknown>)) {
      collectStrings(inner, found, depth + 1);
    }
  }
}
