import { sql, type Kysely } from 'kysely';

/**
 * The inbox badges (`GET /v3/helpdesk/conversations/counts`) kept as counters instead of counted
 * on each request: counting every OPEN conversation took hundreds of milliseconds at 1,000,000
 * conversations (200,000 OPEN), read by every agent's inbox.
 *
 * `helpdesk_inbox_tallies`: per inbox and holder, the OPEN conversations and the unread ones
 * among them (a contact message after the read marker, as core/helpdesk/conversations/inbox-list.ts
 * defines it). The holder is the assignee; 'ffffffff-…' an agent bot alone; the nil UUID nobody
 * (the `unassigned` view). A trigger on `helpdesk_conversations` moves a conversation's share
 * between rows in the transaction that changes it, only when its inbox, holder, OPEN or unread
 * changed (a message on a conversation already unread writes nothing). Rows are filled from
 * the existing conversations here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_inbox_tallies')
    .addColumn('inbox_id', 'uuid', (c) => c.notNull().references('helpdesk_inboxes.id').onDelete('cascade'))
    .addColumn('holder', 'uuid', (c) => c.notNull())
    .addColumn('open', 'integer', (c) => c.notNull())
    .addColumn('unread', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('helpdesk_inbox_tallies_pkey', ['inbox_id', 'holder'])
    .execute();

  await sql`
    create function helpdesk_tally_holder(assignee uuid, bot uuid) returns uuid language sql immutable as $$
      select coalesce(assignee, case when bot is not null then 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid else '00000000-0000-0000-0000-000000000000'::uuid end)
    $$`.execute(db);
  await sql`
    create function helpdesk_tally_unread(last_incoming timestamptz, last_seen timestamptz) returns integer language sql immutable as $$
      select case when last_incoming > coalesce(last_seen, '-infinity'::timestamptz) then 1 else 0 end
    $$`.execute(db);
  await sql`
    create function helpdesk_conversations_tally() returns trigger language plpgsql as $$
    declare
      was_open boolean := tg_op <> 'INSERT' and old.status = 'OPEN';
      is_open boolean := tg_op <> 'DELETE' and new.status = 'OPEN';
      was_holder uuid;
      is_holder uuid;
      was_unread integer;
      is_unread integer;
    begin
      if was_open then
        was_holder := helpdesk_tally_holder(old.assignee_user_id, old.assignee_agent_bot_id);
        was_unread := helpdesk_tally_unread(old.last_incoming_at, old.assignee_last_seen_at);
      end if;
      if is_open then
        is_holder := helpdesk_tally_holder(new.assignee_user_id, new.assignee_agent_bot_id);
        is_unread := helpdesk_tally_unread(new.last_incoming_at, new.assignee_last_seen_at);
      end if;
      if was_open and is_open and old.inbox_id = new.inbox_id and was_holder = is_holder and was_unread = is_unread then
        return null;
      end if;
      if was_open then
        update helpdesk_inbox_tallies set open = open - 1, unread = unread - was_unread
        where inbox_id = old.inbox_id and holder = was_holder;
      end if;
      if is_open then
        insert into helpdesk_inbox_tallies (inbox_id, holder, open, unread) values (new.inbox_id, is_holder, 1, is_unread)
        on conflict (inbox_id, holder) do update set open = helpdesk_inbox_tallies.open + 1, unread = helpdesk_inbox_tallies.unread + excluded.unread;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger helpdesk_conversations_tally after insert or update or delete on helpdesk_conversations
    for each row execute function helpdesk_conversations_tally()`.execute(db);

  await sql`
    insert into helpdesk_inbox_tallies (inbox_id, holder, open, unread)
    select inbox_id, helpdesk_tally_holder(assignee_user_id, assignee_agent_bot_id), count(*), sum(helpdesk_tally_unread(last_incoming_at, assignee_last_seen_at))
    from helpdesk_conversations where status = 'OPEN'
    group by 1, 2`.execute(db);
}
