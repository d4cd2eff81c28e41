import { readFileSync, readdirSync } from 'node:fs';
import { addTypenameToDocument } from '@apollo/client/utilities';
import { GraphQLError, type OperationDefinitionNode, buildSchema, getOperationAST, parse, specifiedRules, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { CLIENT_CSR_CHECKS, SERVING_CSR_CHECKS } from '@ccos/shared/domain';
import { formatServerText } from '@ccos/shared/messages';
import { QUERY_LIMITS, aliasLimit, costRefusal, depthLimit, operationCost, queryLimitRules, selectsIntrospection } from './query-limits';

const schema = buildSchema(readFileSync('libs/shared/api-schema/schema.graphql', 'utf8'));
const rules = [...specifiedRules, ...queryLimitRules()];

/** `fragment F0 { ...F1 ...F1 }` … : each fragment spreads the next twice, 2^n paths in all. */
/** A refusal in Chinese, from its messageCode and messageParams. */
function chinese(error: GraphQLError): string {
  return formatServerText('zh-CN', error.extensions['messageCode'] as string, error.extensions['messageParams'], null);
}

function nestedFragments(count: number): string {
  const fragments = Array.from({ length: count }, (_, i) => (i === count - 1 ? `fragment F${i} on User { id }` : `fragment F${i} on User { ...F${i + 1} ...F${i + 1} }`));
  return `{ me { ...F0 } } ${fragments.join(' ')}`;
}

function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}

function operationOf(source: string): { document: ReturnType<typeof parse>; operation: OperationDefinitionNode } {
  const document = parse(source);
  const operation = getOperationAST(document);
  if (!operation) {
    throw new Error('no operation');
  }
  return { document, operation };
}

describe('depth limit', () => {
  it('validates the 23-fragment document (8.6 s before fragments were remembered) in milliseconds', () => {
    const document = parse(nestedFragments(23));
    const { value: errors, ms } = timed(() => validate(schema, document, rules));
    expect(errors).toEqual([]);
    // Generous for a shared CI machine; the exponential walk took seconds.
    expect(ms).toBeLessThan(250);
  });

  it('stays linear with a thousand fragments spreading each other', () => {
    const document = parse(nestedFragments(1000), { maxTokens: 100_000 });
    const { value: errors, ms } = timed(() => validate(schema, document, [depthLimit(12)]));
    expect(errors).toEqual([]);
    // 2^1000 walks would never end; a linear walk takes tens of milliseconds (a second on a loaded machine).
    expect(ms).toBeLessThan(1000);
  });

  it('counts the depth through fragments and inline fragments', () => {
    const deep = `{ node(id: "x") { installRuns { ...Run } } } fragment Run on InstallRun { events { ... on StepEvent { seq } } }`;
    expect(validate(schema, parse(deep), [depthLimit(4)])).toEqual([]);
    expect(validate(schema, parse(deep), [depthLimit(3)]).map((error) => error.message)).toEqual(['query is nested 4 levels deep; at most 3 are allowed']);
    expect(validate(schema, parse(deep), [depthLimit(3)]).map(chinese)).toEqual(['查询嵌套了 4 层；最多允许 3 层']);
  });

  it('refuses a document nested deeper than 12 levels', () => {
    const deep = `{ __schema { types { fields { type ${'{ ofType '.repeat(10)}{ name }${' }'.repeat(10)} } } } }`;
    expect(validate(schema, parse(deep), rules).map((error) => error.message)).toContain('query is nested 15 levels deep; at most 12 are allowed');
  });

  it('leaves fragment cycles to graphql and does not loop on them', () => {
    const cyclic = parse('{ me { ...A } } fragment A on User { ...B } fragment B on User { ...A }');
    const errors = validate(schema, cyclic, rules).map((error) => error.message);
    expect(errors.some((message) => message.includes('Cannot spread fragment "A" within itself'))).toBe(true);
  });
});

describe('alias limit', () => {
  it('refuses the 65th alias', () => {
    const aliases = (count: number) => parse(`{ ${Array.from({ length: count }, (_, i) => `a${i}: me { id }`).join(' ')} }`);
    expect(validate(schema, aliases(64), [aliasLimit(64)])).toEqual([]);
    expect(validate(schema, aliases(65), [aliasLimit(64)]).map((error) => error.message)).toEqual(['query uses more than 64 aliases']);
    expect(validate(schema, aliases(65), [aliasLimit(64)]).map(chinese)).toEqual(['查询使用的别名超过 64 个']);
  });
});

describe('token limit', () => {
  it('refuses 20,000 repeated fields while parsing, after reading the first tokens only', () => {
    const huge = `{ me { ${'id '.repeat(20_000)}} }`;
    let error: unknown = null;
    try {
      parse(huge, { maxTokens: QUERY_LIMITS.maxTokens });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GraphQLError);
    // graphql's own wording ("more that").
    expect((error as GraphQLError).message).toMatch(new RegExp(`^Syntax Error: Document contains more th.. ${QUERY_LIMITS.maxTokens} tokens\\. Parsing aborted\\.$`));
    // It stopped where the limit was reached: a tenth into the document, not at its end.
    expect((error as GraphQLError).positions?.[0]).toBeLessThan(huge.length / 5);
  });

  it('lets the largest document the token limit admits validate quickly', () => {
    // Repeated fields are what graphql's overlap rule compares pairwise.
    const fields = QUERY_LIMITS.maxTokens - 10;
    const document = parse(`{ me { ${'id '.repeat(fields)}} }`, { maxTokens: QUERY_LIMITS.maxTokens });
    const { ms } = timed(() => validate(schema, document, rules));
    expect(ms).toBeLessThan(250);
  });
});

describe('operation cost', () => {
  it('counts list fields once per item: first/limit where given, 20 otherwise', () => {
    const flat = operationOf('{ me { id username } }');
    expect(operationCost(schema, flat.document, flat.operation, {})).toBe(3);
    // auditLog(first: $n) sizes the list beneath it, entries.
    const page = operationOf('query($n: Int) { auditLog(first: $n) { hasMore entries { id actor } } }');
    expect(operationCost(schema, page.document, page.operation, { n: 5 })).toBe(1 + 1 + (1 + 5 * 2));
    expect(operationCost(schema, page.document, page.operation, { n: 200 })).toBe(1 + 1 + (1 + 200 * 2));
    const listed = operationOf('{ clusters { id name } }');
    expect(operationCost(schema, listed.document, listed.operation, {})).toBe(1 + 20 * 2);
  });

  it('counts the lists the service keeps short at their bound: a verdict has one check per policy rule', () => {
    const verdicts = operationOf('query($c: ID!) { csrPolicyPreview(clusterId: $c) { csrName checks { name } } }');
    const checks = QUERY_LIMITS.listBounds?.['CsrVerdict.checks'] ?? 0;
    // One per rule of the longer list (a serving CSR's), not the 20 a list is assumed to hold.
    expect(checks).toBe(Math.max(CLIENT_CSR_CHECKS.length, SERVING_CSR_CHECKS.length));
    expect(checks).toBeGreaterThan(5);
    expect(operationCost(schema, verdicts.document, verdicts.operation, {})).toBe(1 + 20 * (1 + 1 + checks));
  });

  it('counts a fragment spread twice in one selection set once, as graphql runs it', () => {
    const { document, operation } = operationOf(nestedFragments(23));
    expect(operationCost(schema, document, operation, {})).toBe(2);
  });

  it('refuses nested lists whose product is too large, in linear time through fragments', () => {
    const nested = operationOf(
      'query($c: ID!) { nodes(clusterId: $c) { installRuns { events { ...E } steps { step } } } removalRuns(nodeId: $c) { events { seq } } } fragment E on StepEvent { seq step status detail message occurredAt }',
    );
    const unlimited = { maxCost: Number.MAX_SAFE_INTEGER, assumedListSize: 20 };
    expect(operationCost(schema, nested.document, nested.operation, { c: 'x' }, unlimited)).toBe(1 + 20 * (1 + 20 * (1 + 20 * 6 + 1 + 20 * 1)) + 1 + 20 * (1 + 20));
    const cost = operationCost(schema, nested.document, nested.operation, { c: 'x' });
    expect(cost).toBe(QUERY_LIMITS.maxCost + 1);
    expect(costRefusal(cost)).toBeInstanceOf(GraphQLError);
    expect(costRefusal(cost)?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', maxCost: QUERY_LIMITS.maxCost });
    expect(costRefusal(cost)?.message).toBe('query would resolve more than 50000 fields (list fields count once per item); ask for fewer items or fields');
    expect(chinese(costRefusal(cost) as GraphQLError)).toBe('查询将解析超过 50000 个字段（列表字段按每个条目计一次）；请减少所请求的条目或字段');
    // Each fragment spreads the next in two selection sets: counted 2^59 times over, refused without walking them.
    const aliased = Array.from({ length: 60 }, (_, i) => (i === 59 ? `fragment F${i} on User { id }` : `fragment F${i} on User { a: username b: username ...F${i + 1} ... on User { ...F${i + 1} } }`));
    const bomb = operationOf(`query { users { ...F0 } } ${aliased.join(' ')}`);
    const { value, ms } = timed(() => operationCost(schema, bomb.document, bomb.operation, {}));
    expect(value).toBe(QUERY_LIMITS.maxCost + 1);
    expect(ms).toBeLessThan(100);
  });

  it('lets every operation the console and the agent send through, with the __typename Apollo Client adds, at most half the limit', () => {
    const directory = 'libs/shared/api-schema/src/operations';
    const operations = readdirSync(directory).filter((name) => name.endsWith('.graphql')).map((name) => readFileSync(`${directory}/${name}`, 'utf8'));
    const document = parse(operations.join('\n'), { maxTokens: QUERY_LIMITS.maxTokens * 10 });
    const sent = addTypenameToDocument(document);
    const costs = sent.definitions.flatMap((definition) => (definition.kind === 'OperationDefinition' ? [{ operation: definition.name?.value, cost: operationCost(schema, sent, definition, { first: 200 }) }] : []));
    expect(costs.length).toBeGreaterThan(20);
    expect(costs.filter(({ cost }) => cost > QUERY_LIMITS.maxCost / 2)).toEqual([]);
  });

  it('does not count __typename, which is answered without a resolver', () => {
    const plain = operationOf('query { users { id username } }');
    const typed = operationOf('query { __typename users { __typename id username } }');
    expect(operationCost(schema, typed.document, typed.operation, {})).toBe(operationCost(schema, plain.document, plain.operation, {}));
  });
});

describe('introspection', () => {
  it.each([
    ['{ __schema { types { name } } }', true],
    ['{ __type(name: "Node") { name } }', true],
    ['{ me { ...F } } fragment F on User { id ... on User { x: __typename } } ', false],
    ['{ me { ...F } } fragment F on User { id } fragment G on Query { __schema { queryType { name } } }', false],
    ['query { ...Q } fragment Q on Query { __type(name: "User") { name } }', true],
    ['{ me { __typename } }', false],
  ])('%s asks for the schema: %s', (source, expected) => {
    const { document, operation } = operationOf(source);
    expect(selectsIntrospection(document, operation)).toBe(expected);
  });
});
