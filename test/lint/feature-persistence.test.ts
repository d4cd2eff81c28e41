import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The lint rules that keep persistence in libs/api/data-access-db (issue 17): a feature takes the
 * stores, never TypeORM, the driver or SQL of its own. Run on text as if it were a file of each
 * library.
 */
describe('lint: features do not touch the database', () => {
  const eslint = new ESLint();
  const errorsOf = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).filter((message) => message.severity === 2).map((message) => `${message.ruleId}: ${message.message}`);
  };
  const features = ['feature-auth', 'feature-autoscaling', 'feature-clusters', 'feature-csrs', 'feature-removals', 'feature-artifacts', 'feature-nodes', 'feature-installs'];

  it.each(features)('refuses TypeORM and pg in libs/api/%s, even for a type or in a spec', async (feature) => {
    for (const file of ['src/lib/probe.ts', 'src/lib/probe.spec.ts']) {
      const errors = await errorsOf(`libs/api/${feature}/${file}`, "import type { DataSource } from 'typeorm';\nimport type { Pool } from 'pg';\nexport type Probe = [DataSource, Pool];\n");
      expect(errors.filter((error) => error.startsWith('no-restricted-imports: '))).toHaveLength(2);
    }
  });

  it.each(features)('refuses SQL, repositories, query builders and transactions in libs/api/%s', async (feature) => {
    const errors = await errorsOf(
      `libs/api/${feature}/src/lib/probe.ts`,
      [
        'export async function probe(db: { query(sql: string): Promise<unknown>; getRepository(name: string): { createQueryBuilder(): unknown }; transaction(work: () => Promise<void>): Promise<void> }): Promise<unknown> {',
        "  db.getRepository('nodes').createQueryBuilder();",
        '  await db.transaction(async () => undefined);',
        "  return db.query(`SELECT id FROM nodes`);",
        '}',
        "export const statement = 'UPDATE nodes SET status = 1';",
        '',
      ].join('\n'),
    );
    expect(errors.filter((error) => error.startsWith('no-restricted-syntax: ')).length).toBe(6);
  });

  it('lets data-access-db write its queries, and words that merely start like SQL pass in a feature', async () => {
    expect(await errorsOf('libs/api/data-access-db/src/lib/probe.ts', "import type { DataSource } from 'typeorm';\nexport const probe = (db: DataSource) => db.query(`SELECT 1`);\n")).toEqual([]);
    expect(await errorsOf('libs/api/feature-removals/src/lib/probe.ts', "export const text = 'Update the node, then select a pool';\n")).toEqual([]);
  });

  it('lets specs and testing fixtures of a feature seed through the database they opened', async () => {
    for (const file of ['src/lib/probe.spec.ts', 'src/testing/probe.ts']) {
      const errors = await errorsOf(`libs/api/feature-installs/${file}`, "export const seed = (db: { query(sql: string): Promise<unknown> }) => db.query(`SELECT 1`);\n");
      expect(errors.filter((error) => error.startsWith('no-restricted-syntax: '))).toEqual([]);
    }
  });
});
