import { sql, type Kysely } from 'kysely';

/**
 * Failed authentications counted per (kind, key) — a client address, an account, an account from
 * an address — so that every server process throttles on the same counts (issue 19 §5). One row
 * per key, updated by one upsert per failure; rows idle for a day are pruned.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('auth_failures')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('blocked_until', 'timestamptz')
    .addPrimaryKeyConstraint('auth_failures_pkey', ['kind', 'key'])
    .execute();
  await sql`create index auth_failures_updated_idx on auth_failures (updated_at)`.execute(db);
}
