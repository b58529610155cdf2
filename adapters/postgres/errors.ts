/**
 * Whether a database error is a unique violation (SQLSTATE 23505) of `constraint`. The SQLSTATE
 * is in `code` on PGlite and `pg`, in `errno` on Bun's native client.
 */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: unknown; errno?: unknown; constraint?: string; message?: string } | undefined;
  const sqlState = e?.code === '23505' || e?.errno === '23505';
  return sqlState && (e?.constraint ?? e?.message ?? '').includes(constraint);
}

/**
 * A `.catch` handler for a write that may collide on `constraint`: the collision becomes the
 * domain's error (a 409, not a 500), anything else is thrown on as it is.
 */
export function uniqueViolationAs(constraint: string, domainError: () => Error): (error: unknown) => never {
  return (error) => {
    if (isUniqueViolation(error, constraint)) throw domainError();
    throw error;
  };
}
