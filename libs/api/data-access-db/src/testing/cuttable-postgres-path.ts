import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { TEST_POSTGRES_URL } from './test-database';

/**
 * A TCP path to the real Postgres that the test can cut: while cut, every connection on it is
 * dropped and new ones are reset, as when the database host goes away.
 */
export class CuttablePostgresPath {
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
      const postgres = new URL(TEST_POSTGRES_URL);
      const upstream = connect(Number(postgres.port || 5432), postgres.hostname);
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

  /** `databaseUrl` (a database on the test Postgres) reached through this path. */
  urlOf(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
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
