import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from './data-source';
import { EMBEDDED_PASSWORD_FILE, type EmbeddedDatabase, startEmbeddedDatabase } from './embedded-database';

const run = promisify(execFile);

async function modes(path: string, out: Array<{ path: string; mode: number; directory: boolean }> = []): Promise<Array<{ path: string; mode: number; directory: boolean }>> {
  const info = await lstat(path);
  out.push({ path, mode: info.mode & 0o777, directory: info.isDirectory() });
  if (info.isDirectory()) {
    for (const entry of await readdir(path)) {
      await modes(join(path, entry), out);
    }
  }
  return out;
}

/** Sends a startup message and then, without authenticating, a query; returns every byte the server answered. */
async function queryWithoutAuthenticating(port: number): Promise<Buffer> {
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
  const startup = Buffer.alloc(8 + params.length);
  startup.writeInt32BE(8 + params.length, 0);
  startup.writeInt32BE(196_608, 4);
  params.copy(startup, 8);
  const sql = Buffer.from('SELECT password_hash FROM users\0');
  const query = Buffer.alloc(5 + sql.length);
  query.write('Q', 0, 'latin1');
  query.writeInt32BE(4 + sql.length, 1);
  sql.copy(query, 5);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (answer = Buffer.concat([answer, chunk])));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.on('connect', () => socket.write(Buffer.concat([startup, query])));
    setTimeout(() => socket.destroy(), 5_000).unref();
  });
}

/** The message types in a backend byte stream, e.g. `R E`. */
function messageTypes(bytes: Buffer): string[] {
  const types: string[] = [];
  for (let offset = 0; offset + 5 <= bytes.length; offset += 1 + bytes.readInt32BE(offset + 1)) {
    types.push(String.fromCharCode(bytes[offset] ?? 0));
  }
  return types;
}

describe('the embedded database', () => {
  let dataDir: string;
  let embedded: EmbeddedDatabase;
  let port: number;
  let password: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ccos-embedded-auth-'));
    embedded = await startEmbeddedDatabase(dataDir);
    const url = new URL(embedded.url);
    port = Number(url.port);
    password = decodeURIComponent(url.password);
    // The service's own connection: migrations create tables (and files) after the start.
    const dataSource = await openDatabase({ url: embedded.url, maxConnections: 1 });
    await dataSource.query(`INSERT INTO users (id, username, password_hash, role) VALUES (gen_random_uuid(), 'admin', 'scrypt-hash', 'ADMIN')`);
    await dataSource.destroy();
  });

  afterAll(async () => {
    await embedded?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps a generated password beside secret.key, readable by the service user only', async () => {
    const file = join(dataDir, EMBEDDED_PASSWORD_FILE);
    expect((await lstat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).trim()).toBe(password);
    expect(password).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('answers a client that skips authentication with an error, never with data', async () => {
    const answer = await queryWithoutAuthenticating(port);
    // AuthenticationSASL, then FATAL: the query is never run.
    expect(messageTypes(answer)).toEqual(['R', 'E']);
    expect(answer.readInt32BE(5)).toBe(10);
    expect(answer.toString('latin1')).not.toContain('scrypt-hash');
    expect(answer.toString('latin1')).toContain('28000');
  });

  it('refuses a wrong or missing password (pg and psql) and accepts the generated one', async () => {
    const attempt = async (secret: string | undefined) => {
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', password: secret, connectionTimeoutMillis: 5_000 });
      try {
        await client.connect();
        return (await client.query<{ username: string }>('SELECT username FROM users')).rows;
      } finally {
        await client.end().catch(() => undefined);
      }
    };
    await expect(attempt('wrong-password')).rejects.toMatchObject({ code: '28P01', message: 'password authentication failed' });
    await expect(attempt(undefined)).rejects.toThrow(/password/);
    expect(await attempt(password)).toEqual([{ username: 'admin' }]);

    const psql = (secret: string) => run('psql', ['-w', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-tAc', 'SELECT username FROM users'], { env: { ...process.env, PGPASSWORD: secret, PGCONNECT_TIMEOUT: '5' } });
    await expect(psql('wrong-password')).rejects.toMatchObject({ stderr: expect.stringContaining('password authentication failed') });
    expect((await psql(password)).stdout.trim()).toBe('admin');
  });

  it('keeps the data folder to the service user: folders 0700, no file readable or writable by others', async () => {
    const tree = await modes(dataDir);
    expect(tree.length).toBeGreaterThan(100);
    expect(tree.filter((entry) => entry.directory && entry.mode !== 0o700).map((entry) => entry.path)).toEqual([]);
    expect(tree.filter((entry) => !entry.directory && (entry.mode & 0o077) !== 0).map((entry) => `${entry.path} ${entry.mode.toString(8)}`)).toEqual([]);
  });

  it('answers several connections at once, each with its own statements and transactions', async () => {
    // PGlite has one session: statements of one connection (parse, bind, execute, sync) must not
    // meet another's, as they did when the job engine's connections fetched beside the service's.
    const clients = await Promise.all(
      [0, 1, 2].map(async () => {
        const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', password });
        await client.connect();
        return client;
      }),
    );
    try {
      const [inTransaction, ...others] = clients as [pg.Client, pg.Client, pg.Client];
      const transaction = (async () => {
        await inTransaction.query('BEGIN');
        await inTransaction.query(`INSERT INTO users (id, username, password_hash, role) VALUES (gen_random_uuid(), 'pending', 'x', 'VIEWER')`);
        const seen = await inTransaction.query<{ seen: string }>('SELECT count(*)::text AS seen FROM users WHERE username = $1', ['pending']);
        await inTransaction.query('ROLLBACK');
        return seen.rows[0]?.seen;
      })();
      const answers = await Promise.all(
        others.flatMap((client, which) =>
          Array.from({ length: 40 }, async (_, index) => {
            const result = await client.query<{ n: number; who: string; seen: string }>(
              which === 0 ? 'SELECT $1::int AS n, $2::text AS who, count(*)::text AS seen FROM users WHERE username = $3' : 'SELECT $2::text AS who, $1::int AS n, (SELECT count(*) FROM users WHERE username = $3)::text AS seen',
              [index, `client-${which}`, 'pending'],
            );
            return result.rows[0];
          }),
        ),
      );
      // The other connections never see the row another has not committed.
      expect(answers).toEqual(others.flatMap((_, which) => Array.from({ length: 40 }, (__, index) => ({ n: index, who: `client-${which}`, seen: '0' }))));
      expect(await transaction).toBe('1');
    } finally {
      await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    }
  });

  it('uses the same password after a restart', async () => {
    await embedded.stop();
    embedded = await startEmbeddedDatabase(dataDir);
    const url = new URL(embedded.url);
    port = Number(url.port);
    expect(decodeURIComponent(url.password)).toBe(password);
    const dataSource = await openDatabase({ url: embedded.url, maxConnections: 1 });
    expect(await dataSource.query('SELECT username FROM users')).toEqual([{ username: 'admin' }]);
    await dataSource.destroy();
  });
});
