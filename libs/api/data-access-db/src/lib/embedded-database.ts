import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { startScramFront } from './scram-front';

export interface EmbeddedDatabase {
  /** A `postgres://` URL for TypeORM's ordinary `pg` driver, with the generated password. */
  readonly url: string;
  stop(): Promise<void>;
}

/** The embedded database's password, beside `secret.key` in the data folder. */
export const EMBEDDED_PASSWORD_FILE = 'database.password';

/**
 * Connections the socket serves at once: the service's one, the job engine's three, and room for
 * psql or a test. They take turns at PGlite's one session (SessionTurns), so more cost only memory.
 */
const MAX_CONNECTIONS = 8;

/** A Unix socket path must fit in sun_path (108 bytes with its NUL on Linux). */
const MAX_SOCKET_PATH = 100;

async function embeddedPassword(dataDir: string): Promise<string> {
  const file = join(dataDir, EMBEDDED_PASSWORD_FILE);
  try {
    const password = (await readFile(file, 'utf8')).trim();
    await chmod(file, 0o600);
    return password;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw error;
    }
  }
  const password = randomBytes(32).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return password;
}

/**
 * Takes every permission of group and others off a tree: PGlite unpacks its initial files
 * world-writable (0666) whatever the umask.
 */
async function privateTree(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isSymbolicLink()) {
    return;
  }
  if (info.isDirectory()) {
    await chmod(path, 0o700);
    for (const entry of await readdir(path)) {
      await privateTree(join(path, entry));
    }
  } else if ((info.mode & 0o077) !== 0) {
    await chmod(path, info.mode & 0o700);
  }
}

/**
 * Starts PGlite with its files in `dataDir/pgdata`, so the service uses the same driver and
 * migrations as with a real server. Nothing reaches it unauthenticated: PGlite listens on a
 * Unix socket in a 0700 folder, and the only TCP port (127.0.0.1) is a front that requires
 * SCRAM-SHA-256 with a generated password kept in `dataDir/database.password` (0600). The
 * data folder and everything in it belong to the service's user alone (0700/0600).
 * PGlite runs one query at a time in one session for every connection (the front has them take
 * turns) and LISTEN/NOTIFY does not cross connections, so the embedded mode is single-process
 * (in-process pubsub, jobs found by polling).
 */
export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const password = await embeddedPassword(dataDir);
  const folder = join(dataDir, 'pgdata');
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const db = await PGlite.create(folder);
  await privateTree(folder);
  const local = join(dataDir, 'run');
  const socketDir = Buffer.byteLength(join(local, '.s.PGSQL.5432')) <= MAX_SOCKET_PATH ? local : await mkdtemp(join(tmpdir(), 'ccos-pglite-'));
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  await chmod(socketDir, 0o700);
  const socketPath = join(socketDir, '.s.PGSQL.5432');
  // Left by a process that did not stop cleanly; nobody else can have bound it in a 0700 folder.
  await rm(socketPath, { force: true });
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: MAX_CONNECTIONS });
  await server.start();
  await chmod(socketPath, 0o600);
  const front = await startScramFront(password, socketPath);
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@${front.host}:${front.port}/postgres`,
    async stop() {
      await front.close();
      await server.stop();
      await db.close();
      await privateTree(folder);
      await rm(socketPath, { force: true });
      if (socketDir !== local) {
        await rm(socketDir, { recursive: true, force: true });
      }
    },
  };
}
