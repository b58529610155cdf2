import { SQL } from 'bun';
import { TRANSACTION_ISOLATION_LEVELS, type CompiledQuery, type Dialect, type IsolationLevel, type QueryResult } from 'kysely';
import { postgresDialectOver, type TransactionalConnection } from './postgres-dialect.ts';
import { textArrayLiteral } from './array-parameter.ts';

/**
 * Kysely over Bun's native PostgreSQL client. It replaces `pg` for the service's own queries:
 * `pg` over Bun's `node:net` spends most of a busy server's time writing to its sockets.
 * Single statements go to the pool as they are; a transaction reserves one client for its
 * whole length (reserving for every statement cost a fifth of a busy server's time).
 */
export function bunSqlDialect(sql: SQL, use: PoolUse = newPoolUse()): Dialect {
  return postgresDialectOver(() => new BunSqlConnection(sql, use), () => sql.close());
}

/**
 * What the pool is doing now, for the metrics (Bun's client tells nothing of its pool):
 * statements sent outside a transaction, connections held by open transactions, and
 * transactions waiting for a connection.
 */
export interface PoolUse {
  statements: number;
  transactions: number;
  waiting: number;
}

export const newPoolUse = (): PoolUse => ({ statements: 0, transactions: 0, waiting: 0 });

class BunSqlConnection implements TransactionalConnection {
  private reserved: Awaited<ReturnType<SQL['reserve']>> | undefined;

  constructor(
    private readonly pool: SQL,
    private readonly use: PoolUse,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.reserved) return this.run<R>(this.reserved, query);
    this.use.statements++;
    try {
      return await this.run<R>(this.pool, query);
    } finally {
      this.use.statements--;
    }
  }

  private async run<R>(client: Pick<SQL, 'unsafe'>, query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await client.unsafe(query.sql, query.parameters.map(asParameter));
    const rows = [...result] as R[];
    return { rows, numAffectedRows: result.command && result.command !== 'SELECT' ? BigInt(result.affectedRows ?? result.count ?? 0) : undefined };
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    yield await this.executeQuery<R>(query);
  }

  async begin(isolationLevel?: IsolationLevel): Promise<void> {
    // Only Kysely's own words reach the statement (`serializable`, `repeatable read`, …).
    if (isolationLevel !== undefined && !TRANSACTION_ISOLATION_LEVELS.includes(isolationLevel)) throw new Error(`unknown isolation level ${isolationLevel}`);
    this.use.waiting++;
    try {
      this.reserved = await this.pool.reserve();
    } finally {
      this.use.waiting--;
    }
    this.use.transactions++;
    await this.reserved.unsafe(isolationLevel ? `begin isolation level ${isolationLevel}` : 'begin');
  }

  async end(outcome: 'commit' | 'rollback'): Promise<void> {
    await this.reserved!.unsafe(outcome);
  }

  async release(): Promise<void> {
    const reserved = this.reserved;
    this.reserved = undefined;
    if (reserved) this.use.transactions--;
    await reserved?.release();
  }
}

/** An array of text goes as its literal (array-parameter.ts); Bun sends both with no declared type. */
function asParameter(value: unknown): unknown {
  return Array.isArray(value) ? (textArrayLiteral(value) ?? value) : value;
}
