import { DataSource } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

/**
 * The open database, as the composition root and test fixtures hold it. Features never take it:
 * they get the stores of this library (lint refuses TypeORM and SQL in libs/api/feature-*).
 */
export type Database = DataSource;

export interface DatabaseOptions {
  /** A `postgres://` URL. */
  readonly url: string;
  /** Pool size; the embedded database serves one connection at a time. */
  readonly maxConnections?: number;
}

/**
 * Connects to Postgres and brings the schema up to date with the migrations.
 * `synchronize` is never used: the migrations are the only source of the schema.
 */
export async function openDatabase(options: DatabaseOptions): Promise<DataSource> {
  const dataSource = new DataSource({
    type: 'postgres',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: { max: options.maxConnections ?? 10, connectionTimeoutMillis: 10_000 },
  });
  try {
    await dataSource.initialize();
  } catch (error) {
    throw new Error(`cannot connect to the database at ${redactUrl(options.url)}: ${(error as Error).message}`, { cause: error });
  }
  await dataSource.runMigrations({ transaction: 'each' });
  return dataSource;
}

/** Whether the database answers a trivial query (readiness). */
export async function databaseReachable(dataSource: DataSource): Promise<boolean> {
  try {
    await dataSource.query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

/** A database URL with its password removed, safe to log. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
