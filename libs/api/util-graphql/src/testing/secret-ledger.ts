import { readFileSync } from 'node:fs';
import {
  type DocumentNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValueNode,
  Kind,
  buildSchema,
  getNamedType,
  getNullableType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  parse,
} from 'graphql';

/** The schema as the API emits it: the marks are read from there, not from the code that applies them. */
export const EMITTED_SCHEMA = 'libs/shared/api-schema/schema.graphql';

/** Shorter values could appear in any text by chance (`root`, `true`): they are counted, not searched. */
export const MIN_CHECKED_LENGTH = 8;

interface SentSecret {
  readonly value: string;
  /** Where it was sent, e.g. `Mutation.login(password)` or `AddNodeInput.privateKey`. */
  readonly position: string;
  /** How much of the log existed when it was first sent: a value the service printed before it was ever sent is no echo. */
  readonly logOffset: number;
}

export interface Leak {
  readonly position: string;
  readonly where: string;
  /** The value's first characters and length, never the value itself. */
  readonly hint: string;
}

/**
 * Every value a test sent in an argument or input field the emitted schema marks `@secret`, and
 * a check that none of them comes back: in a response, a log line or a stored audit entry.
 * It reads requests as they are sent (query plus variables, literals included) with its own walk
 * of the schema, so it is an oracle for the service's redaction, not a copy of it.
 */
export class SecretLedger {
  private readonly secrets = new Map<string, SentSecret>();
  private readonly responses: string[] = [];
  private readonly positions = new Set<string>();
  private shortValues = 0;

  constructor(private readonly schema: GraphQLSchema) {}

  static fromEmittedSchema(path = EMITTED_SCHEMA): SecretLedger {
    return new SecretLedger(buildSchema(readFileSync(path, 'utf8')));
  }

  /** Every `@secret` position of the schema (`Type.field(argument)` or `InputType.field`). */
  markedPositions(): string[] {
    const marked: string[] = [];
    for (const type of Object.values(this.schema.getTypeMap())) {
      if (type.name.startsWith('__')) {
        continue;
      }
      if (isInputObjectType(type)) {
        marked.push(...Object.values(type.getFields()).filter(isMarked).map((field) => `${type.name}.${field.name}`));
      } else if (isObjectType(type) || isInterfaceType(type)) {
        for (const field of Object.values(type.getFields())) {
          marked.push(...field.args.filter(isMarked).map((arg) => `${type.name}.${field.name}(${arg.name})`));
        }
      }
    }
    return marked.sort();
  }

  /**
   * Notes a GraphQL request body (one operation or a batch) before it is sent. `logOffset` is the
   * length of the service's log at that moment. Bodies that are no GraphQL are ignored.
   */
  noteRequest(body: unknown, logOffset = 0): void {
    for (const request of Array.isArray(body) ? body : [body]) {
      if (!request || typeof request !== 'object' || typeof (request as { query?: unknown }).query !== 'string') {
        continue;
      }
      const { query, variables } = request as { query: string; variables?: Record<string, unknown> | null };
      let document: DocumentNode;
      try {
        document = parse(query);
      } catch {
        continue;
      }
      for (const { value, position } of secretsIn(this.schema, document, variables ?? {})) {
        this.positions.add(position);
        if (value.length < MIN_CHECKED_LENGTH) {
          this.shortValues += 1;
        } else if (!this.secrets.has(value)) {
          this.secrets.set(value, { value, position, logOffset });
        }
      }
    }
  }

  /** Notes a secret given another way (an environment variable), under a name of its own. */
  noteSecret(value: string, position: string, logOffset = 0): void {
    if (value.length >= MIN_CHECKED_LENGTH && !this.secrets.has(value)) {
      this.secrets.set(value, { value, position, logOffset });
    }
  }

  /** Keeps a response body for the final check. */
  noteResponse(text: string): void {
    this.responses.push(text);
  }

  /** What was sent: distinct values checked, values too short to search, positions exercised. */
  summary(): { readonly checked: number; readonly tooShort: number; readonly positions: readonly string[]; readonly responses: number } {
    return { checked: this.secrets.size, tooShort: this.shortValues, positions: [...this.positions].sort(), responses: this.responses.length };
  }

  /** Every sent secret found in the responses, the log (after it was sent) or the audit rows. */
  leaks(sources: { readonly log: string; readonly auditRows?: readonly unknown[] }): Leak[] {
    const found: Leak[] = [];
    const audit = sources.auditRows ? sources.auditRows.map((row) => JSON.stringify(row)) : [];
    for (const secret of this.secrets.values()) {
      const forms = [secret.value, JSON.stringify(secret.value).slice(1, -1)];
      const seen = (text: string) => forms.some((form) => text.includes(form));
      const hint = `${secret.value.slice(0, 3)}… (${secret.value.length} characters)`;
      if (this.responses.some(seen)) {
        found.push({ position: secret.position, where: 'a response', hint });
      }
      if (seen(sources.log.slice(secret.logOffset))) {
        found.push({ position: secret.position, where: 'the service log', hint });
      }
      if (audit.some(seen)) {
        found.push({ position: secret.position, where: 'an audit_log row', hint });
      }
    }
    return found;
  }

  /** Throws, naming each leak (never the value), when any sent secret came back. */
  assertNoLeaks(sources: { readonly log: string; readonly auditRows?: readonly unknown[] }, who: string): void {
    const leaks = this.leaks(sources);
    if (leaks.length > 0) {
      throw new Error(`${who}: ${leaks.length} secret value(s) sent in @secret arguments came back:\n${leaks.map((leak) => `  ${leak.position} ${leak.hint} in ${leak.where}`).join('\n')}`);
    }
  }
}

function isMarked(definition: GraphQLArgument | GraphQLInputField): boolean {
  return definition.astNode?.directives?.some((directive) => directive.name.value === 'secret') ?? false;
}

/** The strings a document sends in `@secret` positions, walking its selections with the schema's types. */
function secretsIn(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>): Array<{ value: string; position: string }> {
  const found: Array<{ value: string; position: string }> = [];
  const fragments = new Map(document.definitions.flatMap((definition) => (definition.kind === Kind.FRAGMENT_DEFINITION ? [[definition.name.value, definition] as const] : [])));
  const visited = new Set<string>();
  const walk = (selectionSet: SelectionSetNode, parent: GraphQLNamedType | null | undefined): void => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment && !visited.has(fragment.name.value)) {
          visited.add(fragment.name.value);
          walk(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value));
        }
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent);
        continue;
      }
      const field: GraphQLField<unknown, unknown> | undefined = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[selection.name.value] : undefined;
      for (const argument of selection.arguments ?? []) {
        const definition = field?.args.find((candidate) => candidate.name === argument.name.value);
        if (definition) {
          const position = `${parent?.name}.${field?.name}(${definition.name})`;
          collect(definition.type, isMarked(definition), position, valueOf(argument.value, variables), found);
        }
      }
      if (selection.selectionSet) {
        walk(selection.selectionSet, field ? getNamedType(field.type) : null);
      }
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) {
      walk(definition.selectionSet, schema.getRootType(definition.operation));
    }
  }
  return found;
}

function collect(type: GraphQLInputType, marked: boolean, position: string, value: unknown, found: Array<{ value: string; position: string }>): void {
  if (value == null) {
    return;
  }
  if (marked) {
    for (const text of stringsIn(value)) {
      found.push({ value: text, position });
    }
    return;
  }
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      collect(nullable.ofType, false, position, item, found);
    }
  } else if (isInputObjectType(nullable) && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      const field = nullable.getFields()[key];
      if (field) {
        collect(field.type, isMarked(field), `${nullable.name}.${field.name}`, inner, found);
      }
    }
  }
}

function stringsIn(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') {
    return [value];
  }
  if (value && typeof value === 'object' && depth < 32) {
    return Object.values(value as Record<string, unknown>).flatMap((inner) => stringsIn(inner, depth + 1));
  }
  return [];
}

/** A literal or a variable's value, as plain data. */
function valueOf(node: ValueNode, variables: Record<string, unknown>): unknown {
  switch (node.kind) {
    case Kind.VARIABLE:
      return variables[node.name.value];
    case Kind.STRING:
    case Kind.ENUM:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.BOOLEAN:
      return node.value;
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return node.values.map((item) => valueOf(item, variables));
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((field) => [field.name.value, valueOf(field.value, variables)]));
  }
}
