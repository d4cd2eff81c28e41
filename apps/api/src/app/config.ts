import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** Everything the service reads from its environment. README.md documents each variable. */
export interface ApiConfig {
  readonly port: number;
  readonly host: string;
  /** A real Postgres server, or null for the embedded database in `dataDir`. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly secretKey: string;
  readonly adminPassword: string | undefined;
  readonly logLevel: string;
  readonly consoleDir: string;
  readonly sessionTtlSeconds: number;
  readonly maxRequestBytes: number;
}

export type Environment = Record<string, string | undefined>;

/**
 * Reads the configuration. In embedded mode a missing SECRET_KEY is generated once and
 * kept in the data folder (0600); with a real database it must be given, because every
 * replica has to share it.
 */
export async function loadConfig(env: Environment = process.env): Promise<ApiConfig> {
  const dataDir = resolve(env['DATA_DIR'] ?? './.data');
  const databaseUrl = env['DATABASE_URL']?.trim() || null;
  let secretKey = env['SECRET_KEY']?.trim();
  if (!secretKey) {
    if (databaseUrl) {
      throw new Error('SECRET_KEY is required with DATABASE_URL (every replica must share it); generate one with `openssl rand -base64 32`');
    }
    secretKey = await embeddedSecretKey(dataDir);
  }
  return {
    port: integer(env, 'PORT', 4000, 0, 65535),
    host: env['HOST'] ?? '0.0.0.0',
    databaseUrl,
    dataDir,
    secretKey,
    adminPassword: env['ADMIN_PASSWORD'] || undefined,
    logLevel: env['LOG_LEVEL'] ?? 'info',
    consoleDir: resolve(env['CONSOLE_DIR'] ?? 'dist/apps/console/browser'),
    sessionTtlSeconds: integer(env, 'SESSION_TTL_SECONDS', 12 * 3600, 60, 30 * 24 * 3600),
    maxRequestBytes: integer(env, 'MAX_REQUEST_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
  };
}

async function embeddedSecretKey(dataDir: string): Promise<string> {
  const file = join(dataDir, 'secret.key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw error;
    }
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64');
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return key;
}

function integer(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    return fallback;
  }
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name}=${raw} is not an integer between ${min} and ${max}`);
  }
  return value;
}
