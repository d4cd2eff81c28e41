/**
 * The most expensive documents the API admits, parsed with its token limit, validated with its
 * rules (graphql's own plus depth and alias limits) and costed, each family grown to the largest
 * size the token limit lets through. Prints the median of a few runs per family and the worst.
 *
 *   npx tsx bench/graphql-validation.ts [runs=5]
 *
 * Before fragments were remembered, the depth rule walked 2^n paths for n nested fragments
 * (23 fragments, a 1.2 KB document: 8.6 s). Prints figures; not part of the test suite.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { type DocumentNode, GraphQLError, buildSchema, getOperationAST, parse, specifiedRules, validate } from 'graphql';
import { QUERY_LIMITS, operationCost, queryLimitRules } from '@ccos/api/util-graphql';
import { type BenchOptions, type Figure, isMain } from './support/row';

const schema = buildSchema(readFileSync('libs/shared/api-schema/schema.graphql', 'utf8'));
const rules = [...specifiedRules, ...queryLimitRules()];

/** Each family builds a document of size n; the bench finds the largest n the parser admits. */
const FAMILIES: Record<string, (n: number) => string> = {
  'nested fragments, each spreading the next twice': (n) =>
    `{ me { ...F0 } } ${Array.from({ length: n }, (_, i) => (i === n - 1 ? `fragment F${i} on User { id }` : `fragment F${i} on User { ...F${i + 1} ...F${i + 1} }`)).join(' ')}`,
  'nested fragments with aliased fields': (n) =>
    `{ me { ...F0 } } ${Array.from({ length: n }, (_, i) => (i === n - 1 ? `fragment F${i} on User { id }` : `fragment F${i} on User { a${i}: id ...F${i + 1} b${i}: username ...F${i + 1} }`)).join(' ')}`,
  'one field repeated': (n) => `{ me { ${'id '.repeat(n)}} }`,
  'one alias on conflicting fields': (n) => `{ ${Array.from({ length: n }, (_, i) => `a: node(id: "${i}") { id }`).join(' ')} }`,
  'sibling fragments with the same fields': (n) =>
    `{ me { ${Array.from({ length: n }, (_, i) => `...S${i}`).join(' ')} } } ${Array.from({ length: n }, (_, i) => `fragment S${i} on User { id username role }`).join(' ')}`,
  'inline fragments repeated': (n) => `{ me { ${'... on User { id username } '.repeat(n)}} }`,
  'directives on one field': (n) => `{ me { id ${'@include(if: true) '.repeat(n)}} }`,
  'variables declared': (n) => `query(${Array.from({ length: n }, (_, i) => `$v${i}: String`).join(', ')}) { __typename }`,
  'operations in one document': (n) => Array.from({ length: n }, (_, i) => `query Q${i} { me { id } }`).join(' '),
  'nested lists (cost)': (n) => `{ ${Array.from({ length: n }, (_, i) => `c${i}: nodes(clusterId: "x") { installRuns { events { seq } steps { step } } }`).join(' ')} }`,
  'deep selection nesting': (n) => `${'{ me '.repeat(n)}${'}'.repeat(n)}`,
};

function parses(source: string): DocumentNode | null {
  try {
    return parse(source, { maxTokens: QUERY_LIMITS.maxTokens });
  } catch (error) {
    if (error instanceof GraphQLError) {
      return null;
    }
    throw error;
  }
}

/** The largest n whose document the parser admits (binary search; sizes grow with n). */
function largestAdmitted(build: (n: number) => string): number {
  let low = 1;
  let high = QUERY_LIMITS.maxTokens;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (parses(build(middle))) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return low;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Parse, validate and cost `source` as the API does, `runs` times; the median in ms. */
function timeDocument(source: string, runs: number, operationName?: string): { ms: number; refused: string } {
  const times: number[] = [];
  let refused = '';
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const document = parses(source) as DocumentNode;
    const errors = validate(schema, document, rules);
    const operation = getOperationAST(document, operationName);
    const cost = errors.length === 0 && operation ? operationCost(schema, document, operation, {}) : 0;
    times.push(performance.now() - started);
    refused = errors[0]?.message.slice(0, 60) ?? (cost > QUERY_LIMITS.maxCost ? `cost over ${QUERY_LIMITS.maxCost}` : 'admitted');
  }
  return { ms: median(times), refused };
}

const OPERATIONS = 'libs/shared/api-schema/src/operations';

/** The row of `npm run bench`: the worst admitted document's time beside every operation the console and CLI send, as one document. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const runs = options.smoke ? 1 : 5;
  const worst = measureValidation(runs, options.log);
  const files = readdirSync(OPERATIONS).filter((file) => file.endsWith('.graphql'));
  const operations = files.map((file) => readFileSync(`${OPERATIONS}/${file}`, 'utf8')).join('\n');
  // The operations' own limits are per operation; this times the rules over all of them at once.
  const started = performance.now();
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const begun = performance.now();
    validate(schema, parse(operations), rules);
    times.push(performance.now() - begun);
  }
  const real = median(times);
  options.log(`the product's own operations (${files.length} files, ${operations.length} bytes, one document): ${real.toFixed(1)} ms (${(performance.now() - started).toFixed(0)} ms for ${runs})`);
  return [
    {
      name: `parse + validate + cost, worst admitted document (${worst.family})`,
      value: worst.ms,
      unit: 'ms',
      reference: { name: `parse + validate of all ${files.length} operation files of libs/shared/api-schema`, value: real, measured: true },
      better: 'lower',
    },
  ];
}

function measureValidation(RUNS: number, log: (line: string) => void): { family: string; ms: number } {
  const results: Array<{ family: string; n: number; bytes: number; ms: number; refused: string }> = [];
  for (const [family, build] of Object.entries(FAMILIES)) {
    const n = largestAdmitted(build);
    const source = build(n);
    const { ms, refused } = timeDocument(source, RUNS, family === 'operations in one document' ? `Q${n - 1}` : undefined);
    results.push({ family, n, bytes: source.length, ms, refused });
  }
  for (const result of results.sort((a, b) => b.ms - a.ms)) {
    log(`${result.ms.toFixed(1).padStart(7)} ms  ${result.family} (n=${result.n}, ${result.bytes} bytes): ${result.refused}`);
  }
  const worst = results[0];
  log(`worst: ${worst?.family}, ${worst?.ms.toFixed(1)} ms (token limit ${QUERY_LIMITS.maxTokens})`);
  return { family: worst?.family ?? 'none', ms: worst?.ms ?? Number.NaN };
}

if (isMain(import.meta.url)) {
  measureValidation(Number(process.argv[2] ?? 5), (line) => console.log(line));
}
