import type { DataSource } from 'typeorm';

/**
 * Where rate-limiter-flexible's Postgres limiter keeps its counters: the `login_limits` table of
 * the migration UserSessionsAndLoginLimits1765100000000 (`tableCreated`: the limiter never creates
 * one). Spread into `new RateLimiterPostgres({ ...store, keyPrefix, points, duration })`.
 */
export interface LoginLimitStore {
  readonly storeClient: unknown;
  readonly storeType: 'typeorm';
  readonly tableName: string;
  readonly tableCreated: true;
}

export function loginLimitStore(dataSource: DataSource): LoginLimitStore {
  return { storeClient: dataSource, storeType: 'typeorm', tableName: 'login_limits', tableCreated: true };
}
