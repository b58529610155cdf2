import { sql, type Kysely } from 'kysely';

/**
 * Marking a claimed send in flight rewrites its row in place (a HOT update: no index gets a new
 * entry). For that, the write must change no column any index of `messages` reads, its key or
 * its predicate, and the row's page must have room for the new version:
 *
 * - the send queue's partial index is keyed on `send_due_at` and now also filtered on it
 *   (`send_due_at` is null exactly when `send_state` is: a settled message), so a change of
 *   `send_state` alone touches no index; the mark in flight keeps a lease that is still long
 *   enough (send-queue.ts), so `send_due_at` does not change either;
 * - inserts fill a page to 90 % and leave the rest to updates of its rows.
 *
 * Fewer index entries per send, and, with no vacuum running between, fewer dead ones.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table messages set (fillfactor = 90)`.execute(db);
  await db.schema.dropIndex('messages_send_queue_idx').execute();
  await db.schema.createIndex('messages_send_queue_idx').on('messages').column('send_due_at').where(sql.ref('send_due_at'), 'is not', null).execute();
}
