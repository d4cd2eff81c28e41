import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { openDatabase } from '../lib/data-source';
import { JobEngine } from '../lib/jobs/job-engine';
import { type TestDatabase, createTestDatabase, withAdminClient } from './test-database';

/**
 * A fresh database with the service's migrations and the job engine's schema already applied,
 * copied by Postgres from a template made once per set of migrations: an API process started on
 * it has nothing to migrate. For tests whose subject is not the migrations themselves; those start
 * from {@link createTestDatabase}.
 */
export async function createMigratedTestDatabase(prefix = 'ccos_test'): Promise<TestDatabase> {
  return createTestDatabase(prefix, { template: await migratedTemplate() });
}

let template: Promise<string> | undefined;

function migratedTemplate(): Promise<string> {
  template ??= makeTemplate().catch((error: unknown) => {
    template = undefined;
    throw error;
  });
  return template;
}

/** Every process of a run asks for the same template: the first makes it, under an advisory lock; the others wait and use it. */
function makeTemplate(): Promise<string> {
  const name = `ccos_template_${templateVersion()}`;
  // The lock is the admin session's: it ends with it.
  return withAdminClient(async (admin) => {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      const building = await createTestDatabase(`${name}_building`);
      const database = await openDatabase({ url: building.url, maxConnections: 2 });
      await database.destroy();
      const jobs = new JobEngine({ databaseUrl: building.url, concurrency: 1, pollIntervalMs: 60_000, embedded: false, logger: pino({ level: 'silent' }) });
      await jobs.open();
      await jobs.stop();
      // Renamed only once complete, so no process copies a half-made template.
      await admin.query(`ALTER DATABASE ${building.name} RENAME TO ${name}`);
    }
    return name;
  });
}

/**
 * Names what the template holds: the service's migrations, by the text of their files, so that an
 * edited migration makes a new template (a class's compiled text differs between test workers).
 * A newer graphile-worker finds its own migrations missing in a copy and applies them when the API
 * opens its job engine.
 */
function templateVersion(): string {
  const folder = fileURLToPath(new URL('../lib/migrations', import.meta.url));
  const hash = createHash('sha256');
  for (const file of readdirSync(folder).sort()) {
    hash.update(file).update(readFileSync(join(folder, file)));
  }
  return hash.digest('hex').slice(0, 12);
}
