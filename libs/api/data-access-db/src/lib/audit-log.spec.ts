import { Writable } from 'node:stream';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase } from '../testing';
import { AuditLog } from './audit-log';
import { openDatabase } from './data-source';

describe('the audit log on Postgres', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  const lines: string[] = [];
  let audit: AuditLog;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 2 });
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) });
    audit = new AuditLog(dataSource, pino(sink));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const base = { actor: 'alice', action: 'addNode', targetType: 'Node', targetId: 'w1', requestId: 'r-1' };
  const stored = async (id: string) => (await dataSource.query('SELECT result, detail, actor, target_id FROM audit_log WHERE id = $1', [id]))[0];

  it('stores an entry as PENDING before the action and completes it afterwards, keeping its arguments', async () => {
    const id = await audit.begin({ ...base, detail: { args: { hostname: 'w1' } } });
    expect(await stored(id)).toMatchObject({ result: 'PENDING', detail: { args: { hostname: 'w1' } } });
    await audit.complete(id, 'FAILURE', { code: 'CONFLICT' });
    expect(await stored(id)).toMatchObject({ result: 'FAILURE', detail: { args: { hostname: 'w1' }, code: 'CONFLICT' } });
  });

  it('stores what was sent even when it has characters Postgres refuses (NUL, lone surrogates), made visible', async () => {
    const id = await audit.begin({ ...base, actor: 'ev\u0000il', targetId: 'w\u0000', detail: { args: { hostname: 'w\u0000\u0007x', 'k\u0000': 'lone \ud800' } } });
    await audit.complete(id, 'FAILURE', { code: 'BAD_USER_INPUT', note: 'n\u0000' });
    expect(await stored(id)).toEqual({
      result: 'FAILURE',
      actor: 'ev\\u0000il',
      target_id: 'w\\u0000',
      detail: { args: { hostname: 'w\\u0000\\u0007x', 'k\\u0000': 'lone \uFFFD' }, code: 'BAD_USER_INPUT', note: 'n\\u0000' },
    });
  });

  it('throws from begin when the entry cannot be written, so the caller does not act', async () => {
    await dataSource.query(`ALTER TABLE audit_log ADD CONSTRAINT audit_log_test_refuses CHECK (action <> 'refusedAction') NOT VALID`);
    try {
      await expect(audit.begin({ ...base, action: 'refusedAction', detail: {} })).rejects.toThrow(/audit_log_test_refuses/);
      // record() is for entries after the fact: it logs instead of throwing.
      await audit.record({ ...base, action: 'refusedAction', result: 'DENIED', detail: {} });
      expect(lines.join('\n')).toContain('could not write the audit log');
    } finally {
      await dataSource.query('ALTER TABLE audit_log DROP CONSTRAINT audit_log_test_refuses');
    }
  });
});
