/**
 * Runs work atomically: every store handed to `work` writes in one database transaction,
 * which commits when `work` resolves and rolls back when it throws.
 */
export interface UnitOfWork<Stores> {
  transaction<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
}
