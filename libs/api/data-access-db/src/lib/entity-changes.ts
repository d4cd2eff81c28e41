import type { QueryDeepPartialEntity } from 'typeorm';

/**
 * Fields of an entity for an `update`/`insert` query. TypeORM's deep-partial type cannot
 * follow jsonb columns typed as records or arrays of interfaces (it asks for functions); the
 * fields come from the entity's own type, so this one, named conversion is safe.
 */
export function entityChanges<T>(fields: Partial<T>): QueryDeepPartialEntity<T> {
  return fields as unknown as QueryDeepPartialEntity<T>;
}
