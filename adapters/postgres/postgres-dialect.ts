import { PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type Dialect, type Driver, type Kysely } from 'kysely';

/**
 * Kysely's Postgres dialect over a driver of this service's own (Bun's client, PGlite): the
 * SQL, the adapter and the introspection are Postgres's; only how statements reach the
 * database differs.
 */
export abstract class PostgresDialectOver implements Dialect {
  abstract createDriver(): Driver;
  createAdapter() { return new PostgresAdapter(); }
  createIntrospector(db: Kysely<any>) { return new PostgresIntrospector(db); }
  createQueryCompiler() { return new PostgresQueryCompiler(); }
}
