import type { EntityManager, Repository } from 'typeorm';

/**
 * The rows of an `UPDATE … RETURNING` (or `DELETE … RETURNING`) run through TypeORM: on Postgres
 * its `query` answers `[rows, affectedCount]` for those, but plain rows for a SELECT.
 */
export async function returningRows<T>(runner: Pick<Repository<object>, 'query'> | Pick<EntityManager, 'query'>, sql: string, parameters: readonly unknown[]): Promise<T[]> {
  const result: unknown = await runner.query(sql, [...parameters]);
  return Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as T[]) : (result as T[]);
}
