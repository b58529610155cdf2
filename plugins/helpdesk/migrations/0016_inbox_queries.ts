import { sql, type Kysely } from 'kysely';

/**
 * What the agent inbox's list needs (issue 23 item 1; core/helpdesk/conversations/inbox-query.ts).
 * Frozen: never import app code here.
 *
 * Search is Postgres full-text search with the `simple` configuration (no stemming, no stop
 * words: names, e-mail parts and phone digits must match as typed) and prefix queries (`:*`).
 * Chosen over trigrams because `pg_trgm` is an extension PGlite does not load by default, while
 * full-text search and GIN are in every Postgres, embedded or not.
 * - `helpdesk_contacts.search_document`: a generated column (the database keeps it right on
 *   every write) of the name, the e-mail split at its punctuation (so `ana`, `example` and
 *   `com` all find `ana@example.com`) and the phone as digits, also without its first 1, 2 and 3
 *   digits (a country code), so a number typed with or without it matches from its start.
 * - Message text: an expression index on `to_tsvector('simple', content)` of the contact's
 *   messages, replies and notes (activity lines are not searched), no stored column: 5,000,000
 *   messages would carry a second copy of their words. The store's query spells the same
 *   expression and predicate, or the index is not used.
 *
 * Conversation columns, kept by the helpdesk message store as it records messages:
 * - `last_incoming_at`: the contact's latest message; "unread" is a contact message after the
 *   read marker (`assignee_last_seen_at`).
 * - `waiting_since`: the contact's earliest message not yet answered by a person or a bot (the
 *   "waiting longest" sort); null once answered.
 * - `priority_rank`: generated from `priority` (URGENT 4 … LOW 1, none 0) so "urgent first" is
 *   an index order.
 * Existing rows are filled from their messages.
 *
 * Indexes: the first page of each view and sort is an index scan of (workspace or inbox, status,
 * sort key, id); labels have a GIN index (`labels @> …`); contacts' conversations by contact.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table helpdesk_contacts add column search_document tsvector generated always as (
      to_tsvector('simple',
        coalesce(name, '') || ' ' ||
        translate(coalesce(email, ''), '@.-_+', '     ') || ' ' ||
        coalesce(regexp_replace(phone, '\\D', '', 'g'), '') || ' ' ||
        coalesce(substr(regexp_replace(phone, '\\D', '', 'g'), 2), '') || ' ' ||
        coalesce(substr(regexp_replace(phone, '\\D', '', 'g'), 3), '') || ' ' ||
        coalesce(substr(regexp_replace(phone, '\\D', '', 'g'), 4), ''))
    ) stored`.execute(db);
  await sql`create index helpdesk_contacts_search_idx on helpdesk_contacts using gin (search_document)`.execute(db);
  await sql`create index helpdesk_messages_search_idx on helpdesk_messages using gin (to_tsvector('simple', content)) where direction <> 'activity'`.execute(db);

  await db.schema.alterTable('helpdesk_conversations').addColumn('last_incoming_at', 'timestamptz').execute();
  await db.schema.alterTable('helpdesk_conversations').addColumn('waiting_since', 'timestamptz').execute();
  await sql`
    alter table helpdesk_conversations add column priority_rank smallint generated always as (
      case priority when 'URGENT' then 4 when 'HIGH' then 3 when 'MEDIUM' then 2 when 'LOW' then 1 else 0 end
    ) stored`.execute(db);
  await sql`
    update helpdesk_conversations c set
      last_incoming_at = (select max(m.created_at) from helpdesk_messages m where m.conversation_id = c.id and m.direction = 'incoming'),
      waiting_since = (
        select min(m.created_at) from helpdesk_messages m
        where m.conversation_id = c.id and m.direction = 'incoming'
          and m.created_at > coalesce((
            select max(r.created_at) from helpdesk_messages r
            where r.conversation_id = c.id and r.direction = 'outgoing' and not r.private
              and (r.sender_user_id is not null or r.sender_agent_bot_id is not null)
          ), '-infinity'::timestamptz)
      )`.execute(db);

  const ordered = async (name: string, columns: string) => sql`create index ${sql.raw(name)} on helpdesk_conversations (${sql.raw(columns)})`.execute(db);
  await ordered('helpdesk_conversations_status_activity_idx', 'workspace_id, status, last_activity_at, id');
  await ordered('helpdesk_conversations_status_created_idx', 'workspace_id, status, created_at, id');
  await ordered('helpdesk_conversations_status_priority_idx', 'workspace_id, status, priority_rank, last_activity_at, id');
  await ordered('helpdesk_conversations_status_waiting_idx', 'workspace_id, status, waiting_since, id');
  await ordered('helpdesk_conversations_inbox_activity_idx', 'inbox_id, status, last_activity_at, id');
  await ordered('helpdesk_conversations_assignee_activity_idx', 'workspace_id, assignee_user_id, status, last_activity_at, id');
  await ordered('helpdesk_conversations_created_idx', 'workspace_id, created_at, id');
  await ordered('helpdesk_conversations_by_contact_idx', 'contact_id');
  await sql`create index helpdesk_conversations_labels_idx on helpdesk_conversations using gin (labels)`.execute(db);
}
