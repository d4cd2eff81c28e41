import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import pg from 'pg';
import { type TestDatabase, createMigratedTestDatabase } from '@ccos/api/data-access-db/testing';
import { SecretLedger } from '@ccos/api/util-graphql/testing';
import { LoginDocument } from '@ccos/shared/api-schema';

export const E2E_ADMIN_PASSWORD = 'e2e-admin-password';
export const E2E_SECRET_KEY = 'e2e-secret-key-0123456789-abcdefghijklmnopq';
export const API_BUNDLE = resolve('dist/apps/api/main.js');

export interface ApiProcessOptions {
  /** Extra environment; DATABASE_URL is set to a fresh test database unless `embedded` is true. */
  readonly env?: Record<string, string>;
  /** Another replica: run on this database (another process's), which stays its owner's to drop. */
  readonly database?: TestDatabase;
  /** Run on the embedded database in `dataDir` instead of the real Postgres server. */
  readonly embedded?: boolean;
  readonly dataDir?: string;
  readonly port?: number;
  readonly host?: string;
}

/** The built API (`dist/apps/api/main.js`) running as its own process, as in production. */
export interface ApiProcess {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly database: TestDatabase | null;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /**
   * Every value sent in a `@secret` argument (read from the emitted schema) and every response:
   * `stop()` fails when one of those values appears in a response, the log or an audit_log row.
   */
  readonly secrets: SecretLedger;
  /** For requests sent another way (a browser, a raw fetch): notes the body and the response text. */
  observe(requestBody: string, responseText: string): void;
  /**
   * Sends an operation of libs/shared/api-schema (a generated document: result and variables typed
   * from the schema), or a query written in the test (typed by the test) for what those do not ask.
   */
  gql<TData, TVariables>(document: TypedDocumentNode<TData, TVariables>, variables: TVariables, token?: string | null): Promise<GraphqlResult<TData>>;
  gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, token?: string | null): Promise<GraphqlResult<T>>;
  login(username?: string, password?: string): Promise<string>;
  /** Whether the process is still alive (it has not exited since it last started). */
  running(): boolean;
  /** The process id while it runs (replicas name themselves `<hostname>#<pid>` in removal_runs.owner). */
  pid(): number | undefined;
  /** Kills the process (SIGKILL when `hard`), keeping its database and data folder. */
  kill(hard?: boolean): Promise<void>;
  /** Starts it again on the same port, database and data folder, with `env` added to its environment from then on. */
  restart(env?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

export interface GraphqlResult<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

/** {@link ApiProcess.gql} with a token already chosen. */
export interface AuthorizedGql {
  <TData, TVariables>(document: TypedDocumentNode<TData, TVariables>, variables: TVariables): Promise<GraphqlResult<TData>>;
  <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<GraphqlResult<T>>;
}

/** `api.gql` as `token`. */
export function gqlAs(api: Pick<ApiProcess, 'gql'>, token: string): AuthorizedGql {
  return (operation: string | TypedDocumentNode, variables: unknown = {}) => api.gql<never>(operationText(operation), variables as Record<string, unknown>, token);
}

/** What goes over the wire for `operation`: the text of a generated document, or the test's own query. */
export function operationText(operation: string | TypedDocumentNode): string {
  return typeof operation === 'string' ? operation : print(operation);
}

export async function startApiProcess(options: ApiProcessOptions = {}): Promise<ApiProcess> {
  if (!existsSync(API_BUNDLE)) {
    throw new Error(`${API_BUNDLE} is missing: build first (npx nx run api:build)`);
  }
  const database = options.embedded ? null : (options.database ?? (await createMigratedTestDatabase('ccos_e2e')));
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'ccos-e2e-api-')));
  const port = options.port ?? (await freePort());
  const host = options.host ?? '127.0.0.1';
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '/root',
    PORT: String(port),
    HOST: host,
    DATA_DIR: dataDir,
    ADMIN_PASSWORD: E2E_ADMIN_PASSWORD,
    LOG_LEVEL: 'debug',
    // kube-sim listens on 127.0.0.1; tests that check the refusal set ALLOW_CLUSTER_ADDRESSES themselves.
    ALLOW_CLUSTER_ADDRESSES: 'loopback',
    ...(database ? { DATABASE_URL: database.url, SECRET_KEY: E2E_SECRET_KEY } : {}),
    ...options.env,
  };
  let child: ChildProcess | null = null;
  let output = '';
  const secrets = SecretLedger.fromEmittedSchema();
  if (env['ADMIN_PASSWORD']) {
    secrets.noteSecret(env['ADMIN_PASSWORD'], 'ADMIN_PASSWORD (environment)');
  }
  const url = `http://${host}:${port}`;

  const launch = async () => {
    // API_CPU_PROF=<folder>: each API process writes a V8 CPU profile there when it exits (finding where a test's CPU goes).
    child = spawn(process.execPath, [...(process.env['API_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['API_CPU_PROF']}`] : []), '--enable-source-maps', API_BUNDLE], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const started = Date.now();
    while (Date.now() - started < 60_000) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`API exited with ${child.exitCode}:\n${output.slice(-4000)}`);
      }
      try {
        if ((await fetch(`${url}/readyz`)).ok) {
          return;
        }
      } catch {
        // not listening yet
      }
      await new Promise((done) => setTimeout(done, 100));
    }
    throw new Error(`API did not become ready within 60 s:\n${output.slice(-4000)}`);
  };

  const kill = async (hard = false) => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) {
      return;
    }
    const exited = new Promise((done) => running.once('exit', done));
    running.kill(hard ? 'SIGKILL' : 'SIGTERM');
    // A process whose event loop is stuck never runs its SIGTERM handler.
    const stuck = setTimeout(() => running.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(stuck);
  };

  const observe = (requestBody: string, responseText: string) => {
    try {
      secrets.noteRequest(JSON.parse(requestBody), output.length);
    } catch {
      // not JSON: carries no arguments
    }
    secrets.noteResponse(responseText);
  };

  const gql: ApiProcess['gql'] = async (operation: string | TypedDocumentNode, variables: unknown = {}, token: string | null = null): Promise<GraphqlResult<never>> => {
    const query = operationText(operation);
    const body = JSON.stringify({ query, variables });
    secrets.noteRequest({ query, variables: variables as Record<string, unknown> }, output.length);
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    });
    const text = await response.text();
    secrets.noteResponse(text);
    return JSON.parse(text) as never;
  };

  /** The stored audit trail, read after the process stopped. */
  const auditRows = async (): Promise<unknown[]> => {
    if (!database) {
      return [];
    }
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query('SELECT * FROM audit_log')).rows;
    } catch {
      // Never migrated (the process failed to start): nothing stored.
      return [];
    } finally {
      await client.end();
    }
  };

  await launch();
  return {
    url,
    port,
    dataDir,
    database,
    output: () => output,
    secrets,
    observe,
    gql,
    running: () => {
      const current = child as ChildProcess | null;
      return current !== null && current.exitCode === null && current.signalCode === null;
    },
    async login(username = 'admin', password = E2E_ADMIN_PASSWORD) {
      const result = await gql(LoginDocument, { username, password });
      if (!result.data?.login) {
        throw new Error(`login failed: ${JSON.stringify(result.errors)}`);
      }
      return result.data.login.token;
    },
    pid: () => ((child as ChildProcess | null)?.exitCode === null ? (child as ChildProcess | null)?.pid : undefined),
    kill,
    restart: async (more: Record<string, string> = {}) => {
      await kill();
      Object.assign(env, more);
      await launch();
    },
    async stop() {
      await kill();
      // On the embedded database the audit rows go with the process; the log and responses are still checked.
      const rows = await auditRows();
      if (!options.database) {
        await database?.drop();
      }
      if (!options.dataDir) {
        await rm(dataDir, { recursive: true, force: true });
      }
      secrets.assertNoLeaks({ log: output, auditRows: rows }, `API process on port ${port}`);
    },
  };
}

/**
 * A port nothing listens on, for a process the test starts next. Chosen at random below the
 * kernel's ephemeral range (`net.ipv4.ip_local_port_range`): a port from `listen(0)` comes from that
 * range, where the kernel also picks the source port of every outgoing connection, so with test
 * files running side by side one of them could take the port before the process binds it
 * (EADDRINUSE). Below the range only another caller of this function can, one chance in thousands.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const { createServer } = await import('node:net');
  const { readFile } = await import('node:fs/promises');
  const ephemeralLow = Number((await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '32768')).trim().split(/\s+/)[0]) || 32768;
  const low = 10_000;
  const high = Math.max(low + 1000, ephemeralLow);
  const bindable = (port: number) =>
    new Promise<boolean>((resolveBindable) => {
      const server = createServer();
      server.once('error', () => resolveBindable(false));
      server.listen(port, host, () => server.close(() => resolveBindable(true)));
    });
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await bindable(port)) {
      return port;
    }
  }
  throw new Error(`no free port in ${low}–${high - 1} on ${host} after 100 tries`);
}

export interface GraphqlAnswer<T> {
  readonly status: number;
  readonly data?: T | null;
  readonly errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

/**
 * A GraphQL request over a TCP connection of its own from `localAddress` (any 127.x.y.z
 * works on loopback), so a test can play clients at different addresses.
 */
export function graphqlFrom<T = Record<string, unknown>>(
  url: string,
  localAddress: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<GraphqlAnswer<T>> {
  const body = JSON.stringify({ query, variables });
  return new Promise((resolveAnswer, reject) => {
    const call = request(
      `${url}/graphql`,
      { method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          try {
            resolveAnswer({ status: response.statusCode ?? 0, ...(JSON.parse(text) as Omit<GraphqlAnswer<T>, 'status'>) });
          } catch {
            reject(new Error(`HTTP ${response.statusCode}: not GraphQL: ${text.slice(0, 200)}`));
          }
        });
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}
