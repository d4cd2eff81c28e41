import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '@ccos/api/data-access-db/testing';
import { type BuiltApi, startBuiltApi } from './built-api';
import { RowUnavailable } from './row';

export const BENCH_ADMIN_PASSWORD = 'bench-admin-password';
const SECRET_KEY = 'bench-secret-key-0123456789-abcdefghijklmnop';

/** The built API on a fresh database of the Postgres server at 127.0.0.1:5432, signed in as admin. */
export interface ApiWorld {
  readonly api: BuiltApi;
  readonly databaseUrl: string;
  readonly dir: string;
  /** The admin's session token. */
  readonly token: string;
  gql<T>(query: string, variables?: Record<string, unknown>, token?: string): Promise<T>;
  stop(): Promise<void>;
}

/**
 * The benchmarks play many browsers (subscribers) with the admin's one session: the graphql-ws
 * limits per session and user (WS_CONNECTIONS_PER_*) would refuse all but the first few.
 */
export const MANY_BROWSERS_ENV: Readonly<Record<string, string>> = { WS_CONNECTIONS_PER_SESSION: '1000', WS_CONNECTIONS_PER_USER: '1000', WS_CONNECTIONS_PER_PROCESS: '2000' };

export async function startApiWorld(env: Record<string, string> = {}): Promise<ApiWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'ccos-bench-'));
  const database = await createTestDatabase('ccos_bench');
  let api: BuiltApi;
  try {
    api = await startBuiltApi({ DATABASE_URL: database.url, SECRET_KEY, ADMIN_PASSWORD: BENCH_ADMIN_PASSWORD, DATA_DIR: dir, LOG_LEVEL: 'warn', ALLOW_CLUSTER_ADDRESSES: 'loopback', ...MANY_BROWSERS_ENV, ...env });
  } catch (error) {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
    if (String(error).includes('is missing: build it first')) {
      throw new RowUnavailable('the API is not built (npx nx run api:build)');
    }
    throw error;
  }
  const gql = async <T>(query: string, variables: Record<string, unknown> = {}, token?: string): Promise<T> => {
    const response = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: T; errors?: unknown[] };
    if (body.errors) {
      throw new Error(JSON.stringify(body.errors).slice(0, 1000));
    }
    return body.data as T;
  };
  const token = (await gql<{ login: { token: string } }>('mutation($u:String!,$p:String!){ login(username:$u,password:$p){ token } }', { u: 'admin', p: BENCH_ADMIN_PASSWORD })).login.token;
  return {
    api,
    databaseUrl: database.url,
    dir,
    token,
    gql: (query, variables, as) => gql(query, variables, as ?? token),
    stop: async () => {
      await api.close();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resident set size and its peak of a process, in bytes (Linux /proc). */
export async function rssOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}
