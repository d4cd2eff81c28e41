import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase } from '@ccos/api/data-access-db/testing';
import { eventually } from '@ccos/shared/util-timing/testing';
import { type ApiProcess, startApiProcess } from '../support/api-process';

/**
 * A TCP path to the real Postgres that the test can cut: while cut, every connection on it is
 * dropped and new ones are reset, as when the database host goes away.
 */
class CuttablePostgresPath {
  private readonly sockets = new Set<Socket>();
  private cut = false;
  private constructor(private readonly server: Server) {}

  static async open(): Promise<CuttablePostgresPath> {
    const server = createServer();
    const path = new CuttablePostgresPath(server);
    server.on('connection', (client) => {
      if (path.cut) {
        client.destroy();
        return;
      }
      const upstream = connect(5432, '127.0.0.1');
      for (const socket of [client, upstream]) {
        path.sockets.add(socket);
        socket.on('close', () => path.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    return path;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  sever(): void {
    this.cut = true;
    for (const socket of this.sockets) {
      socket.destroy();
    }
  }

  restore(): void {
    this.cut = false;
  }

  close(): Promise<void> {
    this.sever();
    return new Promise((closed) => this.server.close(() => closed()));
  }
}

async function probe(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

describe('readiness: /readyz follows the database, /healthz the process', () => {
  let path: CuttablePostgresPath;
  let api: ApiProcess;
  let database: TestDatabase;

  beforeAll(async () => {
    path = await CuttablePostgresPath.open();
    database = await createTestDatabase('ccos_e2e_ready');
    // The API reaches its database only through the path the test can cut.
    const url = new URL(database.url);
    url.port = String(path.port);
    api = await startApiProcess({ database, env: { DATABASE_URL: url.toString() } });
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
