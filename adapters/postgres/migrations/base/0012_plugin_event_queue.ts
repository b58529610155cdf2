import { sql, type Kysely } from 'kysely';

/**
 * Events the enabled plugins subscribe to wait here for their subscribers (written in the same
 * statement as the event), taken by workers in batches under a lease instead of one pg-boss job
 * per event. `due_at` and the lease are wall-clock times; a subscriber that throws is tried
 * again later (`attempts`). Jobs queued before this migration are still handled by their queue.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('plugin_event_queue')
    .addColumn('event_id', 'uuid', (c) => c.primaryKey())
    .addColumn('due_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claim_id', 'uuid')
    .addColumn('claimed_until', 'timestamptz')
    .execute();
  await sql`create index plugin_event_queue_due_idx on plugin_event_queue (due_at)`.execute(db);
}
