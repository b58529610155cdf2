import { sql, type Kysely } from 'kysely';

/**
 * `plugin_event_queue` announces only statements that inserted rows. Every statement that logs
 * events holds an insert into the queue for the plugins' share of them, and a statement-level
 * trigger fires even when that share is empty: each such commit sent a NOTIFY (serializing it
 * with every other notifying commit) and woke every listening worker to claim nothing. As the
 * send queue's announcement does (0021), the trigger reads the inserted rows as a transition table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function plugin_event_queue_announce() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from announced) then
        perform pg_notify('plugin_event_queue', '');
      end if;
      return null;
    end $$`.execute(db);
  await sql`drop trigger plugin_event_queue_announce on plugin_event_queue`.execute(db);
  await sql`
    create trigger plugin_event_queue_announce after insert on plugin_event_queue
    referencing new table as announced
    for each statement execute function plugin_event_queue_announce()`.execute(db);
}
