/** Postgres' SQLSTATE for a unique constraint that an insert or update would break. */
const UNIQUE_VIOLATION = '23505';

/**
 * The constraint a failed query broke when it was a unique violation (`'unique'` when the
 * driver does not name it), else null. TypeORM wraps the driver's error; both are looked at.
 */
export function uniqueViolationOf(error: unknown): string | null {
  const failure = error as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } } | null;
  const code = failure?.code ?? failure?.driverError?.code;
  return code === UNIQUE_VIOLATION ? (failure?.constraint ?? failure?.driverError?.constraint ?? 'unique') : null;
}
