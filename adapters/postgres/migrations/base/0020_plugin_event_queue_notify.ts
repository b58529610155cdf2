import { sql, type Kysely } from 'kysely';

/**
 * Events written to `plugin_event_queue` announce themselves: a NOTIFY on the channel
 * `plugin_event_queue` once per inserting statement, delivered when the transaction commits (so
 * never before the rows are visible, and never for a rolled-back one). A worker listening there
 * claims them at once instead of at its next poll (apps/plugin-events.ts); polling stays for a
 * worker whose listening connection is down. Postgres folds identical notifications of one
 * transaction into one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function plugin_event_queue_announce() returns trigger language plpgsql as $$
    begin
      perform pg_notify('plugin_event_queue', '');
      return null;
    end $$`.execute(db);
  await sql`
    create trigger plugin_event_queue_announce after insert on plugin_event_queue
    for each statement execute function plugin_event_queue_announce()`.execute(db);
}
