/**
 * Runs work atomically: every store handed to `work` writes in one database transaction,
 * which commits when `work` resolves and rolls back when it throws.
 */
export interface UnitOfWork<Stores> {
  transaction<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
  /**
   * Runs reads that need no transaction (each statement on its own): spares the begin and the
   * commit of a transaction on a hot path. Without it, `read` falls back to a transaction.
   */
  read?<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
}

/** `uow.read` where the unit of work offers it, otherwise a transaction. */
export function readWith<Stores, T>(uow: UnitOfWork<Stores>, work: (stores: Stores) => Promise<T>): Promise<T> {
  return uow.read ? uow.read(work) : uow.transaction(work);
}
