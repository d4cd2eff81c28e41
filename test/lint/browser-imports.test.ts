import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The lint rules that keep the console and the shared libraries free of server code, run on text
 * as if it were a file of each library: Node built-ins and server packages fail, the same imports
 * pass in API code.
 */
describe('lint: what browser code may import', () => {
  const eslint = new ESLint();
  const errorsOf = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).filter((message) => message.severity === 2).map((message) => `${message.ruleId}: ${message.message}`);
  };

  it.each([
    ['libs/console/ui/src/lib/probe.ts', "import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n"],
    ['libs/console/feature-nodes/src/lib/probe.ts', "import { join } from 'path';\nexport const probe = join;\n"],
    ['libs/shared/domain/src/lib/probe.ts', "import { createHash } from 'node:crypto';\nexport const probe = createHash;\n"],
    ['apps/console/src/app/probe.ts', "import { spawn } from 'child_process';\nexport const probe = spawn;\n"],
    ['apps/graphiql/src/probe.tsx', "import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n"],
  ])('refuses a Node built-in in %s', async (filePath, code) => {
    expect((await errorsOf(filePath, code)).some((error) => error.startsWith('no-restricted-imports: '))).toBe(true);
  });

  it('refuses a server package in the GraphQL IDE (a .tsx file)', async () => {
    expect((await errorsOf('apps/graphiql/src/probe.tsx', "import { Client } from 'pg';\nexport const probe = Client;\n")).some((error) => error.startsWith('@nx/enforce-module-boundaries'))).toBe(true);
  });

  it('refuses a server package in a console library', async () => {
    expect((await errorsOf('libs/console/ui/src/lib/probe.ts', "import { Client } from 'pg';\nexport const probe = Client;\n")).some((error) => error.startsWith('@nx/enforce-module-boundaries'))).toBe(true);
  });

  it('lets API code and the shared libraries\u2019 specs use them', async () => {
    expect(await errorsOf('libs/api/feature-nodes/src/lib/probe.ts', "import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n")).toEqual([]);
    expect(await errorsOf('libs/shared/domain/src/lib/probe.spec.ts', "import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n")).toEqual([]);
  });
});
