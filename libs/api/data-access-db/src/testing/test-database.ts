import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The real Postgres server tests run against (trust auth on this kind of machine). */
export const TEST_POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * Creates a fresh database on the test server, empty or a copy of `template`; `drop()` removes it
 * (terminating stragglers).
 */
export async function createTestDatabase(prefix = 'ccos_test', options: { template?: string } = {}): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await withAdminClient((client) => client.query(`CREATE DATABASE ${name}${options.template ? ` TEMPLATE ${options.template}` : ''}`));
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withAdminClient(async (client) => {
        await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
        await client.query(`DROP DATABASE IF EXISTS ${name}`);
      }),
  };
}

export async function withAdminClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
