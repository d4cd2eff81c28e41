import { readFileSync } from 'node:fs';
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  buildSchema,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
} from 'graphql';
import { EMITTED_SCHEMA } from '@ccos/api/util-graphql/testing';

/**
 * Requests built from the emitted schema (libs/shared/api-schema/schema.graphql), so tests that
 * must cover "every operation" or "every @secret argument" follow the schema as it grows instead
 * of a hand-kept list.
 */
export function emittedSchema(): GraphQLSchema {
  return buildSchema(readFileSync(EMITTED_SCHEMA, 'utf8'));
}

export type OperationKind = 'query' | 'mutation' | 'subscription';

export interface RootField {
  readonly kind: OperationKind;
  readonly field: GraphQLField<unknown, unknown>;
}

/** Every query, mutation and subscription field of the schema. */
export function rootFields(schema: GraphQLSchema): RootField[] {
  const roots: Array<[OperationKind, ReturnType<GraphQLSchema['getQueryType']>]> = [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
    ['subscription', schema.getSubscriptionType()],
  ];
  return roots.flatMap(([kind, type]) => (type ? Object.values(type.getFields()).map((field) => ({ kind, field })) : []));
}

export function isSecretMarked(definition: GraphQLArgument | GraphQLInputField): boolean {
  return definition.astNode?.directives?.some((directive) => directive.name.value === 'secret') ?? false;
}

/** The `@secret` input fields (`Type.field`) a type reaches through its input objects and lists. */
export function secretPositions(type: GraphQLInputType, seen = new Set<string>()): string[] {
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    return secretPositions(nullable.ofType, seen);
  }
  if (!isInputObjectType(nullable) || seen.has(nullable.name)) {
    return [];
  }
  seen.add(nullable.name);
  return Object.values(nullable.getFields()).flatMap((field) => [...(isSecretMarked(field) ? [`${nullable.name}.${field.name}`] : []), ...secretPositions(field.type, seen)]);
}

/** Whether a root field takes a credential: an argument marked `@secret`, or one whose input type has such a field. */
export function takesCredential(root: RootField): boolean {
  return root.field.args.some((arg) => isSecretMarked(arg) || secretPositions(arg.type).length > 0);
}

/**
 * A selection of everything a type has that needs no arguments, `depth` object levels down:
 * leaf fields always, object fields while depth remains. Empty for leaf types.
 */
export function selectionOf(type: GraphQLOutputType, depth: number): string {
  const named: GraphQLNamedType = getNamedType(type);
  if (isLeafType(named)) {
    return '';
  }
  if (isUnionType(named)) {
    return '{ __typename }';
  }
  if (!isObjectType(named) && !isInterfaceType(named)) {
    return '{ __typename }';
  }
  const parts: string[] = ['__typename'];
  for (const field of Object.values(named.getFields())) {
    if (field.args.some((arg) => isNonNullType(arg.type) && arg.defaultValue === undefined)) {
      continue;
    }
    if (isLeafType(getNamedType(field.type))) {
      parts.push(field.name);
    } else if (depth > 0) {
      parts.push(`${field.name} ${selectionOf(field.type, depth - 1)}`);
    }
  }
  return `{ ${parts.join(' ')} }`;
}

/** A value as a GraphQL literal of `type` (enum names unquoted, strings JSON-quoted, which GraphQL reads the same way). */
export function literalOf(type: GraphQLInputType, value: unknown): string {
  if (value === null || value === undefined) {
    return 'null';
  }
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    return Array.isArray(value) ? `[${value.map((item) => literalOf(nullable.ofType, item)).join(', ')}]` : literalOf(nullable.ofType, value);
  }
  if (isInputObjectType(nullable) && typeof value === 'object' && !Array.isArray(value)) {
    const fields = nullable.getFields();
    return `{ ${Object.entries(value as Record<string, unknown>)
      .map(([key, inner]) => `${key}: ${fields[key] ? literalOf(fields[key].type, inner) : untypedLiteral(inner)}`)
      .join(', ')} }`;
  }
  if (isEnumType(nullable) && typeof value === 'string' && /^[_A-Za-z][_0-9A-Za-z]*$/.test(value)) {
    return value;
  }
  return untypedLiteral(value);
}

/** A literal of a value whatever the type wants (wrong types are welcome here). */
export function untypedLiteral(value: unknown): string {
  if (value === null || value === undefined) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return `[${value.map(untypedLiteral).join(', ')}]`;
  }
  if (typeof value === 'object') {
    return `{ ${Object.entries(value as Record<string, unknown>)
      .filter(([key]) => /^[_A-Za-z][_0-9A-Za-z]*$/.test(key))
      .map(([key, inner]) => `${key}: ${untypedLiteral(inner)}`)
      .join(', ')} }`;
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? String(value) : '0';
  }
  if (typeof value === 'boolean') {
    return String(value);
  }
  return JSON.stringify(String(value));
}

/**
 * One operation on one root field: arguments as variables (`$a: T!`) or as literals, and the
 * given selection. Returns the document and the variables to send with it.
 */
export function operationFor(
  root: RootField,
  args: ReadonlyArray<{ readonly definition: GraphQLArgument; readonly value: unknown; readonly asLiteral: boolean }>,
  selection: string,
): { query: string; variables: Record<string, unknown> } {
  const variables: Record<string, unknown> = {};
  const declared: string[] = [];
  const passed: string[] = [];
  for (const { definition, value, asLiteral } of args) {
    if (asLiteral) {
      passed.push(`${definition.name}: ${literalOf(definition.type, value)}`);
    } else {
      declared.push(`$${definition.name}: ${String(definition.type)}`);
      passed.push(`${definition.name}: $${definition.name}`);
      variables[definition.name] = value;
    }
  }
  const head = `${root.kind} Fz${root.field.name[0]?.toUpperCase()}${root.field.name.slice(1)}${declared.length > 0 ? `(${declared.join(', ')})` : ''}`;
  return { query: `${head} { ${root.field.name}${passed.length > 0 ? `(${passed.join(', ')})` : ''} ${selection} }`, variables };
}
