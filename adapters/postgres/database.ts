import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { SQL } from 'bun';
import { bunSqlDialect, newPoolUse, type PoolUse } from './bun-sql-dialect.ts';
import { pgliteDialect } from './pglite-dialect.ts';
import type { Database } from './schema.ts';

/**
 * The database: Postgres over Bun's client when a URL is given, otherwise the embedded PGlite in
 * `dataDir` (or in memory with `dataDir: 'memory://'`). pg-boss shares the same database.
 */
export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: 'postgres' | 'pglite';
  /** Set on the embedded database: pg-boss needs the instance itself. */
  pglite?: PGlite;
  /** Set on Postgres: the connection string pg-boss opens its own pool with. */
  url?: string;
  /** Set on Postgres: the service's connection pool, its size and what it is doing now. */
  pool?: { max: number; use: Readonly<PoolUse> };
  close(): Promise<void>;
}

/** Connections of the service's own pool on Postgres unless told (pg-boss and the realtime adapter have theirs). */
const POOL_MAX = 10;

/**
 * How long a pool connection lives unless told. Its prepared statements keep the generic plans
 * Postgres chose for them, and one chosen while a table was small (a seq scan of the messages
 * for a batch's ids) is kept until the table's statistics change, which without autovacuum is
 * never: a send batch's writes would scan ever more rows. A new connection plans its statements
 * again against the tables as they are. A connection busy at the time finishes first.
 */
const CONNECTION_LIFETIME_SECONDS = 20;

export async function openDatabase(options: { url?: string; dataDir: string; poolSize?: number; connectionLifetimeSeconds?: number }): Promise<DatabaseHandle> {
  if (options.url) {
    const max = options.poolSize ?? POOL_MAX;
    const sql = new SQL({ url: options.url, max, maxLifetime: options.connectionLifetimeSeconds ?? CONNECTION_LIFETIME_SECONDS });
    const use = newPoolUse();
    const db = new Kysely<Database>({ dialect: bunSqlDialect(sql, use) });
    return { db, dialect: 'postgres', url: options.url, pool: { max, use }, close: () => db.destroy() };
  }

  if (!options.dataDir.startsWith('memory://')) mkdirSync(options.dataDir, { recursive: true });
  const pglite = await PGlite.create(options.dataDir);
  const db = new Kysely<Database>({ dialect: pgliteDialect(pglite) });
  return {
    db,
    dialect: 'pglite',
    pglite,
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}
