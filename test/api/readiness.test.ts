import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CuttablePostgresPath, type TestDatabase, createTestDatabase } from '@ccos/api/data-access-db/testing';
import { eventually } from '@ccos/shared/util-timing/testing';
import { type ApiProcess, startApiProcess } from '../support/api-process';

describe('readiness: /readyz follows the database, /healthz the process', () => {
  let path: CuttablePostgresPath;
  let api: ApiProcess;
  let database: TestDatabase;

  beforeAll(async () => {
    path = await CuttablePostgresPath.open();
    database = await createTestDatabase('ccos_e2e_ready');
    // The API reaches its database only through the path the test can cut.
    api = await startApiProcess({ database, env: { DATABASE_URL: path.urlOf(database.url) } });
  }, 120_000);
  afterAll(async () => {
    path?.restore();
    await api?.stop();
    await path?.close();
    await database?.drop();
  });

  it('answers 503 while the database is unreachable and 200 again once it is back, without a restart', async () => {
    expect(await probe(`${api.url}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } });
    path.sever();
    const down = await eventually(async () => {
      const result = await probe(`${api.url}/readyz`);
      return result.status === 503 ? result : undefined;
    }, 15_000, '/readyz answering 503', 100);
    expect(down).toEqual({ status: 503, body: { status: 'database unreachable' } });
    // The process itself is fine: liveness must not restart it for the database's sake.
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    path.restore();
    const back = await eventually(async () => {
      const result = await probe(`${api.url}/readyz`);
      return result.status === 200 ? result : undefined;
    }, 30_000, '/readyz answering 200 again', 100);
    expect(back).toEqual({ status: 200, body: { status: 'ready' } });
    expect(api.running()).toBe(true);
  });
});

async function probe(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}
