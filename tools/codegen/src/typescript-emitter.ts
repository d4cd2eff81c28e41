import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type TypeNode,
  GraphQLEnumType,
  type GraphQLInputObjectType,
  GraphQLList,
  print,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  typeFromAST,
  visit,
} from 'graphql';

const TYPENAME = Symbol('__typename');

/** How scalars travel over the wire (JSON): dates are ISO strings. */
const SCALARS: Record<string, string> = {
  ID: 'string',
  String: 'string',
  Boolean: 'boolean',
  Int: 'number',
  Float: 'number',
  DateTimeISO: 'string',
  JSON: 'unknown',
  JSONObject: 'Record<string, unknown>',
};

/**
 * Emits TypeScript for the operations in `documents`: one result type, one variables
 * type and one TypedDocumentNode per operation, plus the enums and input types they use.
 * Small on purpose: it covers what this project's schema uses (objects, lists, enums,
 * inputs, named and inline fragments), and fails loudly on anything else.
 */
export function emitOperations(schema: GraphQLSchema, documents: DocumentNode[]): string {
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: OperationDefinitionNode[] = [];
  for (const document of documents) {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) {
        fragments.set(definition.name.value, definition);
      } else if (definition.kind === Kind.OPERATION_DEFINITION) {
        if (!definition.name) {
          throw new Error('every operation needs a name');
        }
        operations.push(definition);
      }
    }
  }
  const usedEnums = new Set<GraphQLEnumType>();
  const usedInputs = new Set<GraphQLInputObjectType>();

  const selectionType = (type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, indent: string): string => {
    if (type instanceof GraphQLNonNull) {
      return selectionType(type.ofType, selectionSet, indent).replace(/ \| null$/, '');
    }
    if (type instanceof GraphQLList) {
      return `Array<${selectionType(type.ofType, selectionSet, indent).replace(/ \| null$/, ' | null')}> | null`;
    }
    if (type instanceof GraphQLScalarType) {
      return `${scalar(type.name)} | null`;
    }
    if (type instanceof GraphQLEnumType) {
      usedEnums.add(type);
      return `${type.name} | null`;
    }
    if (!(type instanceof GraphQLObjectType) || !selectionSet) {
      throw new Error(`unsupported output type ${String(type)} (abstract types are not supported)`);
    }
    const fields = collectFields(type, selectionSet);
    const inner = `${indent}  `;
    const lines = fields.map(({ alias, fieldType, selection }) =>
      `${inner}${alias}: ${fieldType === TYPENAME ? `'${type.name}'` : selectionType(fieldType, selection, inner)};`,
    );
    return `{\n${lines.join('\n')}\n${indent}} | null`;
  };

  const collectFields = (type: GraphQLObjectType, selectionSet: SelectionSetNode) => {
    const result: Array<{ alias: string; fieldType: GraphQLOutputType | typeof TYPENAME; selection: SelectionSetNode | undefined }> = [];
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const alias = selection.alias?.value ?? name;
        if (name === '__typename') {
          result.push({ alias, fieldType: TYPENAME, selection: undefined });
          continue;
        }
        const field = type.getFields()[name];
        if (!field) {
          throw new Error(`${type.name} has no field ${name}`);
        }
        result.push({ alias, fieldType: field.type, selection: selection.selectionSet });
      } else {
        const nested = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments.get(selection.name.value)?.selectionSet;
        if (!nested) {
          throw new Error(`unknown fragment ${selection.kind === Kind.FRAGMENT_SPREAD ? selection.name.value : ''}`);
        }
        result.push(...collectFields(type, nested));
      }
    }
    return result;
  };

  const inputType = (type: GraphQLInputType): string => {
    if (type instanceof GraphQLNonNull) {
      return inputType(type.ofType).replace(/ \| null$/, '');
    }
    if (type instanceof GraphQLList) {
      return `Array<${inputType(type.ofType)}> | null`;
    }
    if (type instanceof GraphQLScalarType) {
      return `${scalar(type.name)} | null`;
    }
    if (type instanceof GraphQLEnumType) {
      usedEnums.add(type);
      return `${type.name} | null`;
    }
    usedInputs.add(type);
    for (const field of Object.values(type.getFields())) {
      inputType(field.type);
    }
    return `${type.name} | null`;
  };

  const blocks: string[] = [];
  for (const operation of operations) {
    const name = operation.name?.value ?? '';
    const kind = operation.operation === 'query' ? 'Query' : operation.operation === 'mutation' ? 'Mutation' : 'Subscription';
    const root = kind === 'Query' ? schema.getQueryType() : kind === 'Mutation' ? schema.getMutationType() : schema.getSubscriptionType();
    if (!root) {
      throw new Error(`the schema has no ${kind} type`);
    }
    const resultName = `${name}${kind}`;
    const result = selectionType(new GraphQLNonNull(root), operation.selectionSet, '');
    const variables = (operation.variableDefinitions ?? []).map((definition) => {
      const type = typeFromAST(schema, definition.type as never) as GraphQLInputType | undefined;
      if (!type) {
        throw new Error(`unknown variable type in ${name}: ${printTypeNode(definition.type)}`);
      }
      const optional = !(type instanceof GraphQLNonNull) || definition.defaultValue !== undefined;
      return `  ${definition.variable.name.value}${optional ? '?' : ''}: ${inputType(type)};`;
    });
    const document = { kind: Kind.DOCUMENT, definitions: [operation, ...fragmentsUsedBy(operation, fragments)] };
    blocks.push(
      [
        `export type ${resultName} = ${result};`,
        `export type ${resultName}Variables = ${variables.length ? `{\n${variables.join('\n')}\n}` : 'Record<string, never>'};`,
        `export const ${name}Document = ${JSON.stringify(stripLocations(document))} as unknown as TypedDocumentNode<${resultName}, ${resultName}Variables>;`,
        // The same operation as text, for clients without a GraphQL library (the agent).
        `export const ${name}Text = ${JSON.stringify(print(document as DocumentNode))};`,
      ].join('\n'),
    );
  }

  const enumBlocks = [...usedEnums]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((type) => `export type ${type.name} = ${type.getValues().map((value) => `'${value.name}'`).join(' | ')};`);
  const inputBlocks = [...usedInputs]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((type) => {
      const fields = Object.values(type.getFields()).map((field) => {
        const optional = !(field.type instanceof GraphQLNonNull) || field.defaultValue !== undefined;
        return `  ${field.name}${optional ? '?' : ''}: ${inputType(field.type)};`;
      });
      return `export interface ${type.name} {\n${fields.join('\n')}\n}`;
    });

  return [
    '// Generated by tools/codegen from libs/shared/api-schema/schema.graphql and src/operations/*.graphql.',
    '// Do not edit: run `npm run codegen`.',
    "import type { TypedDocumentNode } from '@graphql-typed-document-node/core';",
    '',
    ...enumBlocks,
    '',
    ...inputBlocks.flatMap((block) => [block, '']),
    ...blocks.flatMap((block) => [block, '']),
  ].join('\n');
}

function scalar(name: string): string {
  const mapped = SCALARS[name];
  if (!mapped) {
    throw new Error(`no TypeScript type for scalar ${name}; add it to SCALARS`);
  }
  return mapped;
}

function fragmentsUsedBy(operation: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): FragmentDefinitionNode[] {
  const used = new Map<string, FragmentDefinitionNode>();
  const walk = (node: OperationDefinitionNode | FragmentDefinitionNode) => {
    visit(node, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (fragment && !used.has(spread.name.value)) {
          used.set(spread.name.value, fragment);
          walk(fragment);
        }
      },
    });
  };
  walk(operation);
  return [...used.values()];
}

function stripLocations(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(stripLocations);
  }
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).filter(([key]) => key !== 'loc').map(([key, value]) => [key, stripLocations(value)]));
  }
  return node;
}

function printTypeNode(node: TypeNode): string {
  return node.kind === Kind.NAMED_TYPE ? node.name.value : node.kind === Kind.LIST_TYPE ? `[${printTypeNode(node.type)}]` : `${printTypeNode(node.type)}!`;
}

