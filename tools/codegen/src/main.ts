import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DocumentNode, Kind, buildSchema, parse, validate } from 'graphql';
import { emitOperations } from './typescript-emitter';

/**
 * `npm run codegen` — types for the operation documents in libs/shared/api-schema.
 * `npm run codegen -- --check` fails when the generated file is stale or an operation
 * does not validate against the committed schema.
 */
const ROOT = 'libs/shared/api-schema';
const OUTPUT = join(ROOT, 'src/generated/operations.ts');

const schema = buildSchema(await readFile(join(ROOT, 'schema.graphql'), 'utf8'));
const files = (await readdir(join(ROOT, 'src/operations'))).filter((name) => name.endsWith('.graphql')).sort();
const documents = await Promise.all(
  files.map(async (name) => {
    const document = parse(await readFile(join(ROOT, 'src/operations', name), 'utf8'));
    return { name, document };
  }),
);
const merged: DocumentNode = { kind: Kind.DOCUMENT, definitions: documents.flatMap(({ document }) => document.definitions) };
const errors = validate(schema, merged);
if (errors.length > 0) {
  for (const error of errors) {
    console.error(`${error.message}`);
  }
  process.exit(1);
}
const output = emitOperations(schema, documents.map(({ document }) => document));
if (process.argv.includes('--check')) {
  const current = await readFile(OUTPUT, 'utf8').catch(() => '');
  if (current !== output) {
    console.error(`${OUTPUT} is stale: run \`npm run codegen\``);
    process.exit(1);
  }
  console.log(`${OUTPUT} is up to date (${files.length} operation files)`);
} else {
  await writeFile(OUTPUT, output);
  console.log(`wrote ${OUTPUT} from ${files.length} operation files`);
}
