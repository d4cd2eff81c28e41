import { Writable } from 'node:stream';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@ccos/api/data-access-db';
import { type TestDatabase, createTestDatabase } from '@ccos/api/data-access-db/testing';
import { rememberRequestSecrets, withRequestSecrets } from '@ccos/api/util-graphql';
import { createLogger } from './logger';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) });
  return { lines, logger: createLogger('debug', sink) };
}

describe('the service log', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 2 });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('logs database errors without their SQL parameters or the values Postgres quotes', async () => {
    const { lines, logger } = capture();
    const failures = await Promise.all([
      dataSource.query('SELECT $1::uuid', ['parameter-that-is-no-uuid']).catch((error: unknown) => error),
      dataSource.query('INSERT INTO users (id, username, password_hash, role) VALUES ($1, $2, $3, $4)', ['00000000-0000-4000-8000-000000000001', 'dup', 'scrypt$hash-one', 'ADMIN']).then(() =>
        dataSource.query('INSERT INTO users (id, username, password_hash, role) VALUES ($1, $2, $3, $4)', ['00000000-0000-4000-8000-000000000002', 'dup', 'scrypt$hash-two', 'ADMIN']).catch((error: unknown) => error),
      ),
    ]);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(Error);
      logger.error({ err: failure }, 'unexpected error in a GraphQL operation');
    }
    const logged = lines.join('');
    expect(logged).toContain('invalid input syntax for type uuid');
    expect(logged).toContain('users_username_unique');
    expect(logged).toContain('SELECT $1::uuid');
    for (const value of ['parameter-that-is-no-uuid', 'scrypt$hash', '"parameters"', 'Key (username)']) {
      expect(logged).not.toContain(value);
    }
  });

  it('cuts out the values a request sent in @secret arguments, in whatever it logs', async () => {
    const { lines, logger } = capture();
    await withRequestSecrets(async () => {
      rememberRequestSecrets(['kubeconfig-line-one\nline-two', 'hunter2-long']);
      await Promise.resolve();
      logger.warn({ nodeId: 'n1', output: 'ssh: Permission denied (hunter2-long)', err: new Error('kubeconfig-line-one\nline-two is bad') }, 'provisioning failed');
    });
    logger.info({ note: 'hunter2-long' }, 'outside any request nothing is known');
    expect(lines[0]).not.toContain('hunter2-long');
    expect(lines[0]).not.toContain('kubeconfig-line-one');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ nodeId: 'n1', output: 'ssh: Permission denied ([redacted])', msg: 'provisioning failed' });
    expect(lines[1]).toContain('hunter2-long');
  });

  it('removes tokens and keys from every line, and redacts the Authorization header', () => {
    const { lines, logger } = capture();
    logger.info({ body: 'users: [{ token: abcdef.0123456789abcdef }]', req: { headers: { authorization: 'Bearer sess_token' } } }, 'answer from the cluster');
    expect(lines[0]).not.toMatch(/abcdef\.0123456789abcdef|sess_token/);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ req: { headers: { authorization: '[redacted]' } } });
  });
});
