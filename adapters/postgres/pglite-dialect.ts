import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely';
import { PostgresDialectOver } from './postgres-dialect.ts';

/**
 * Kysely over PGlite. PGlite is a single connection, so a Kysely transaction is a PGlite
 * `transaction()` held open until Kysely commits or rolls back: PGlite then keeps every
 * other statement (pg-boss's included) out until it ends.
 */
export class PGliteDialect extends PostgresDialectOver {
  constructor(private readonly pglite: PGlite) {
    super();
  }
  createDriver(): Driver { return new PGliteDriver(this.pglite); }
}

class PGliteDriver implements Driver {
  constructor(private readonly pglite: PGlite) {}
  async init() {}
  async acquireConnection(): Promise<DatabaseConnection> { return new PGliteConnection(this.pglite); }
  async beginTransaction(connection: DatabaseConnection) { await (connection as PGliteConnection).begin(); }
  async commitTransaction(connection: DatabaseConnection) { await (connection as PGliteConnection).end('commit'); }
  async rollbackTransaction(connection: DatabaseConnection) { await (connection as PGliteConnection).end('rollback'); }
  async releaseConnection() {}
  async destroy() {}
}

class PGliteConnection implements DatabaseConnection {
  private tx: PGliteTransaction | undefined;
  private finish: ((outcome: 'commit' | 'rollback') => void) | undefined;
  private done: Promise<unknown> | undefined;

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const runner = this.tx ?? this.pglite;
    const result = await runner.query<R>(query.sql, query.parameters as any[]);
    return {
      rows: result.rows,
      numAffectedRows: result.affectedRows === undefined ? undefined : BigInt(result.affectedRows),
    };
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    yield await this.executeQuery<R>(query);
  }

  begin(): Promise<void> {
    return new Promise((started, failed) => {
      this.done = this.pglite
        .transaction(async (tx) => {
          this.tx = tx;
          const outcome = await new Promise<'commit' | 'rollback'>((resolve) => {
            this.finish = resolve;
            started();
          });
          if (outcome === 'rollback') await tx.rollback();
        })
        .catch((error) => {
          failed(error);
          throw error;
        });
    });
  }

  async end(outcome: 'commit' | 'rollback'): Promise<void> {
    const finish = this.finish;
    const done = this.done;
    this.tx = undefined;
    this.finish = undefined;
    this.done = undefined;
    finish?.(outcome);
    await done;
  }
}

