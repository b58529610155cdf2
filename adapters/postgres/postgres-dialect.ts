import { PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type DatabaseConnection, type Dialect, type IsolationLevel, type Kysely } from 'kysely';

/** A connection of one of this service's own drivers: statements, and one transaction at a time. */
export interface TransactionalConnection extends DatabaseConnection {
  /** Starts a transaction; `isolationLevel` when Kysely's `setIsolationLevel` asked for one. */
  begin(isolationLevel?: IsolationLevel): Promise<void>;
  end(outcome: 'commit' | 'rollback'): Promise<void>;
  /** Called once the statement or transaction it was acquired for is done. */
  release(): Promise<void>;
}

/**
 * Kysely's Postgres dialect over a driver of this service's own (Bun's client, PGlite): the
 * SQL, the adapter and the introspection are Postgres's; only how statements reach the
 * database differs: `connect` gives the connection one statement or transaction runs on, and
 * `close` ends the client when Kysely is destroyed.
 */
export function postgresDialectOver(connect: () => TransactionalConnection, close: () => Promise<void>): Dialect {
  return {
    createDriver: () => ({
      async init() {},
      async acquireConnection() { return connect(); },
      async beginTransaction(connection, settings) { await (connection as TransactionalConnection).begin(settings.isolationLevel); },
      async commitTransaction(connection) { await (connection as TransactionalConnection).end('commit'); },
      async rollbackTransaction(connection) { await (connection as TransactionalConnection).end('rollback'); },
      async releaseConnection(connection) { await (connection as TransactionalConnection).release(); },
      destroy: close,
    }),
    createAdapter: () => new PostgresAdapter(),
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
