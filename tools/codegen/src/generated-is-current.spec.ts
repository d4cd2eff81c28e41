import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { emitOperations } from './typescript-emitter';

const ROOT = 'libs/shared/api-schema';

describe('generated operation types', () => {
  it('every operation validates against schema.graphql and the generated file is current (`npm run codegen`)', async () => {
    const schema = buildSchema(await readFile(join(ROOT, 'schema.graphql'), 'utf8'));
    const files = (await readdir(join(ROOT, 'src/operations'))).filter((name) => name.endsWith('.graphql')).sort();
    const documents = await Promise.all(files.map(async (name) => parse(await readFile(join(ROOT, 'src/operations', name), 'utf8'))));
    expect(validate(schema, { kind: 'Document' as never, definitions: documents.flatMap((document) => document.definitions) }).map(String)).toEqual([]);
    expect(emitOperations(schema, documents)).toBe(await readFile(join(ROOT, 'src/generated/operations.ts'), 'utf8'));
  });

  it('types nullable fields, lists, enums, inputs and fragments', () => {
    const schema = buildSchema(`
      enum Color { RED GREEN }
      input Paint { color: Color!, coats: Int = 1, note: String }
      type Wall { id: ID!, color: Color, tags: [String!]!, neighbours: [Wall] }
      type Query { wall(id: ID!): Wall }
      type Mutation { paint(id: ID!, paint: Paint!): Wall! }
    `);
    const output = emitOperations(schema, [
      parse(`fragment W on Wall { id color }
        query GetWall($id: ID!) { wall(id: $id) { ...W tags neighbours { id } } }
        mutation PaintWall($id: ID!, $paint: Paint!) { paint(id: $id, paint: $paint) { __typename id } }`),
    ]);
    expect(output).toContain("export type Color = 'RED' | 'GREEN';");
    expect(output).toContain('export interface Paint {\n  color: Color;\n  coats?: number | null;\n  note?: string | null;\n}');
    expect(output).toContain('export type GetWallQuery = {\n  wall: {\n    id: string;\n    color: Color | null;\n    tags: Array<string>;\n    neighbours: Array<{\n      id: string;\n    } | null> | null;\n  } | null;\n};');
    expect(output).toContain("export type PaintWallMutation = {\n  paint: {\n    __typename: 'Wall';\n    id: string;\n  };\n};");
    expect(output).toContain('export type GetWallQueryVariables = {\n  id: string;\n};');
  });
});
