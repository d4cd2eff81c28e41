/// <reference types="node" />
import { readFile } from 'node:fs/promises';
import { generate } from '@graphql-codegen/cli';
import { describe, expect, it } from 'vitest';
import config from '../codegen';

interface GeneratedFile {
  readonly filename: string;
  readonly content: string;
}

/**
 * The committed typed operations are what GraphQL Code Generator makes of schema.graphql and
 * src/operations today: an operation that no longer validates against the schema fails the run,
 * and a changed operation or schema without `npm run codegen` fails the comparison.
 */
describe('generated operations (`npm run codegen`)', () => {
  it('every operation validates against schema.graphql and every generated file is current', async () => {
    const files = (await generate({ ...config, silent: true, errorsOnly: true }, false)) as GeneratedFile[];
    expect(files.map((file) => file.filename).sort()).toEqual(Object.keys(config.generates).sort());
    for (const file of files) {
      expect(file.content, `${file.filename} is stale: run \`npm run codegen\``).toBe(await readFile(file.filename, 'utf8'));
    }
  });

  it('refuses an operation that asks for a field the schema does not have', async () => {
    const broken = { ...config, silent: true, errorsOnly: true, documents: 'query Broken { nodes(clusterId: "c") { noSuchField } }', generates: { 'broken.ts': { plugins: ['typescript-operations'] } } };
    await expect(generate(broken, false)).rejects.toThrow(/noSuchField/);
  });
});
