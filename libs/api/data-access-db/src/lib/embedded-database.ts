import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedDatabase {
  /** A `postgres://` URL for TypeORM's ordinary `pg` driver. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite with its files in `dataDir` behind a Postgres wire-protocol socket on
 * 127.0.0.1, so the service uses the same driver and migrations as with a real server.
 * PGlite runs one query at a time and LISTEN/NOTIFY does not cross connections, so the
 * embedded mode is single-process (one connection, in-process pubsub).
 */
export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const folder = join(dataDir, 'pgdata');
  await mkdir(folder, { recursive: true });
  const db = await PGlite.create(folder);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
  await server.start();
  const address = server.getServerConn();
  return {
    url: `postgres://postgres@${address}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
