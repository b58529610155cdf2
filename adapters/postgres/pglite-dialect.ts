import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import type { CompiledQuery, Dialect, QueryResult } from 'kysely';
import { postgresDialectOver, type TransactionalConnection } from './postgres-dialect.ts';

/**
 * Kysely over PGlite. PGlite is a single connection, so a Kysely transaction is a PGlite
 * `transaction()` held open until Kysely commits or rolls back: PGlite then keeps every
 * other statement (pg-boss's included) out until it ends. PGlite itself is closed by its
 * owner (database.ts), after Kysely.
 */
export function pgliteDialect(pglite: PGlite): Dialect {
  return postgresDialectOver(() => new PGliteConnection(pglite), async () => {});
}

class PGliteConnection implements TransactionalConnection {
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

  /**
   * Any isolation level is met as it is: PGlite runs one transaction at a time, so every
   * transaction is serializable.
   */
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

  /** One connection for everything: nothing to give back. */
  async release(): Promise<void> {}
}

