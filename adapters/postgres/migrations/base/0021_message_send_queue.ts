import { sql, type Kysely } from 'kysely';

/**
 * The message rows become the send queue (core/messaging/send-record.ts): an outbound message
 * waiting for, or on its way to, the network carries its send's state, owner and lease in its
 * own row, claimed in batches with `FOR UPDATE SKIP LOCKED`. A settled message leaves the queue
 * (`send_state` null), so the partial index holds only the sends in progress.
 *
 * `send_due_at` is when the row next needs a worker: a queued send's earliest start, a claimed or
 * in-flight send's lease end, an in-doubt send's end of grace. One index scan finds all three.
 *
 * Messages PENDING at the upgrade are queued again: the job queue that carried them before is no
 * longer read. A NOTIFY on `message_sends` once per inserting statement wakes idle workers.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('messages')
    .addColumn('send_state', 'text')
    .addColumn('send_due_at', 'timestamptz')
    .addColumn('send_owner', 'text')
    .addColumn('send_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('send_hops', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db
    .updateTable('messages')
    .set({ send_state: 'queued', send_due_at: sql`now()` })
    .where('direction', '=', 'outbound')
    .where('status', '=', 'PENDING')
    .execute();
  await db.schema.createIndex('messages_send_queue_idx').on('messages').column('send_due_at').where(sql.ref('send_state'), 'is not', null).execute();
  await sql`
    create function message_sends_announce() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from new_messages where send_state = 'queued') then
        perform pg_notify('message_sends', '');
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger message_sends_announce after insert on messages
    referencing new table as new_messages
    for each statement execute function message_sends_announce()`.execute(db);
}
