import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** A database handle: the pool, or one transaction (a Kysely transaction is a Kysely too). */
export type DatabaseHandle = Kysely<Database>;

/** Builds a feature's stores on a handle, with the services the feature was given. */
export type StoreFactory<S, C> = (db: DatabaseHandle, context: C) => S;

/**
 * A feature's way to the database without holding the pool: its stores on the pool for reads and
 * single statements, or a unit of work whose stores all share one transaction. Plugins receive
 * this instead of the raw handle (plugins/kernel/context.ts).
 */
export interface Storage<C> {
  read<S>(factory: StoreFactory<S, C>): S;
  /** Runs `work` in one transaction; the handle is for the few statements no store covers. */
  transaction<S, T>(factory: StoreFactory<S, C>, work: (stores: S, db: DatabaseHandle) => Promise<T>): Promise<T>;
}

/** `context` is asked lazily: the context that owns this storage is built around it. */
export function databaseStorage<C>(db: DatabaseHandle, context: () => C): Storage<C> {
  return {
    read: (factory) => factory(db, context()),
    transaction: (factory, work) => db.transaction().execute((trx) => work(factory(trx, context()), trx)),
  };
}
