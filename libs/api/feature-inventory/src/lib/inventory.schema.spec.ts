import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { INVENTORY_SCHEMA } from './inventory.schema';

/** Rewrite with: npx tsx -e "import('./libs/api/feature-inventory/src/lib/inventory.schema.ts').then(m => console.log(JSON.stringify(m.INVENTORY_SCHEMA, null, 2)))" > docs/inventory.schema.json */
const PUBLISHED = 'docs/inventory.schema.json';

describe('the published inventory schema', () => {
  it('is the schema the API validates files with', async () => {
    expect(JSON.parse(await readFile(PUBLISHED, 'utf8'))).toEqual(INVENTORY_SCHEMA);
  });
});
