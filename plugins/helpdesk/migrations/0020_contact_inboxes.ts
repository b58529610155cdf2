import { sql, type Kysely } from 'kysely';

/**
 * `helpdesk_contacts.inbox_ids`: the inboxes a contact has ever had a conversation in, kept by a
 * trigger on `helpdesk_conversations` (a write only when a contact first appears in an inbox).
 * An Agent's search for a name many contacts share first keeps the contacts seen in the Agent's
 * inboxes (plugins/helpdesk/conversations/search.ts): when none or few of them are, the list no
 * longer walks every conversation of those inboxes looking for matches that are not there (at
 * 1,000,000 conversations, a name of 5,000 contacts none of whom wrote to an Agent's five
 * inboxes took 285 ms). An inbox stays listed after its conversations move or go (a merge, a
 * delete): the column may name too many inboxes, never too few, so it only narrows a search.
 * The contacts' search index takes the column as its second key, so the word and the inboxes
 * are matched in the index together (a name of 5,000 contacts, none seen in the inboxes: 1.7 ms,
 * where filtering the 5,000 rows read each of them). Frozen: never import app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table helpdesk_contacts add column inbox_ids uuid[] not null default '{}'`.execute(db);
  await sql`
    update helpdesk_contacts ct set inbox_ids = seen.inbox_ids
    from (select contact_id, array_agg(distinct inbox_id) as inbox_ids from helpdesk_conversations group by contact_id) seen
    where seen.contact_id = ct.id`.execute(db);
  await sql`
    create function helpdesk_contact_seen_in_inbox() returns trigger language plpgsql as $$
    begin
      update helpdesk_contacts set inbox_ids = inbox_ids || new.inbox_id
      where id = new.contact_id and not (new.inbox_id = any(inbox_ids));
      return null;
    end $$`.execute(db);
  await sql`
    create trigger helpdesk_contact_seen_in_inbox after insert or update of inbox_id, contact_id on helpdesk_conversations
    for each row execute function helpdesk_contact_seen_in_inbox()`.execute(db);
  await sql`drop index helpdesk_contacts_search_idx`.execute(db);
  await sql`create index helpdesk_contacts_search_idx on helpdesk_contacts using gin (search_document, inbox_ids)`.execute(db);
}
