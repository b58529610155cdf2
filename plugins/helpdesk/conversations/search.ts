import { sql, type Expression, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { HelpdeskTables } from '../tables.ts';
import { messagesWithWord } from './word-frequency.ts';

export type Tables = Database & HelpdeskTables & { c: HelpdeskTables['helpdesk_conversations'] };
type Eb = ExpressionBuilder<Tables, 'c'>;
export type SearchCondition = (eb: Eb) => Expression<SqlBool>;

/**
 * Above this many hits a word is common: the list walks its sort order and checks each
 * conversation (stopping at a page), rather than gathering every hit first.
 */
const RARE_WORD_HITS = 2000;

/**
 * A name held by at most this many contacts (of those seen in the caller's inboxes, when the
 * list is limited to some) leads a narrowed search (an Agent's, or one inbox's or team's): the
 * matches are gathered first, their contacts' conversations by index, then sorted. Walking the
 * sort order instead passes every conversation without a match, all of them when none matches.
 * A name held by more is walked: its matches are dense enough to fill a page (and the count of
 * up to 100) within a few thousand rows, where gathering probes every contact's conversations
 * (1,000 contacts of an Agent's five inboxes in fifty, at 1,000,000 conversations: 45–70 ms
 * gathered, 15–25 ms walked).
 */
const CONTACT_LED_MAX = 500;

/**
 * Whom the list is limited to: `narrowed` for an Agent, one inbox or one team; `inboxes` when
 * that limit is a set of inboxes (an Agent's, or one inbox), which the contacts' side is kept to.
 */
export interface SearchScope {
  narrowed: boolean;
  inboxes?: readonly string[];
}

export interface Search {
  condition: SearchCondition;
  /** The matches are few enough to gather, then sort (the list keeps Postgres from walking the sort order). */
  gathered: boolean;
  /** The list walks its sort order checking each conversation (no word narrowed it to a set of ids). */
  walked: boolean;
}

/**
 * The word as a tsquery prefix (`:*`). Words are letters and digits only
 * (core/helpdesk/conversations/inbox-query.ts: searchTerms), so they cannot carry tsquery
 * syntax; they go as a bound parameter all the same.
 */
const prefix = (word: string) => sql<string>`to_tsquery('simple', ${`${word}:*`})`;

/**
 * The contacts a word matches; within `inboxes`, only those seen in one of them
 * (`inbox_ids`, migrations/0020_contact_inboxes.ts, never missing an inbox): a name many
 * contacts share may be held by none who wrote to an Agent's inboxes.
 */
function contactsMatching(db: Kysely<Tables>, workspaceId: string, word: string, inboxes: readonly string[] | undefined) {
  const matching = db.selectFrom('helpdesk_contacts').select('id').where('workspace_id', '=', workspaceId).where(sql<boolean>`search_document @@ ${prefix(word)}`);
  return inboxes === undefined ? matching : matching.where(sql<boolean>`inbox_ids && array[${sql.join(inboxes.length > 0 ? inboxes : [null])}]::uuid[]`);
}

/** Repeats the expression and predicate of `helpdesk_messages_search_idx` exactly, or the index is not used. */
function messagesMatching(db: Kysely<Tables>, workspaceId: string, word: string) {
  return db
    .selectFrom('helpdesk_messages')
    .select('conversation_id as id')
    .where('workspace_id', '=', workspaceId)
    .where('direction', '<>', 'activity')
    .where(sql<boolean>`to_tsvector('simple', content) @@ ${prefix(word)}`);
}

/**
 * A word matches a conversation when its contact's name, e-mail or phone digits do, or one of its
 * messages (not activity lines) does. Each side is either a set gathered before (the hits of a
 * rare word, a few ids; or the word's contacts as a subquery Postgres hashes once) or, for a word
 * in many messages, checked row by row (correlated, by `helpdesk_messages_conversation_idx`): the
 * walk of the sort order then finds a page after a few rows, where gathering every hit first
 * would read them all. `offset 0` keeps that EXISTS a per-row subplan: without it Postgres turns
 * it into a hashed set of every hit (125,000 messages for "refund" at 200,000 conversations:
 * 220 ms instead of 25 ms).
 */
function matching(contacts: Side, messages: Side, db: Kysely<Tables>, workspaceId: string, word: string, inboxes: readonly string[] | undefined): SearchCondition {
  return (eb) =>
    eb.or([
      contacts === 'many' ? eb('c.contact_id', 'in', contactsMatching(db, workspaceId, word, inboxes)) : contacts.length > 0 ? eb('c.contact_id', 'in', contacts) : sql<SqlBool>`false`,
      messages === 'many'
        ? eb.exists(
            eb
              .selectFrom('helpdesk_messages as m')
              .select(sql`1`.as('one'))
              .whereRef('m.conversation_id', '=', 'c.id')
              .where('m.direction', '<>', 'activity')
              .where(sql<boolean>`to_tsvector('simple', m.content) @@ ${prefix(word)}`)
              .offset(0),
          )
        : messages.length > 0
          ? eb('c.id', 'in', messages)
          : sql<SqlBool>`false`,
    ]);
}

/** A word's hits on one side (contact ids, or conversation ids of messages), or 'many': over RARE_WORD_HITS. */
type Side = string[] | 'many';

/**
 * The search, every word required (each may match the contact or any message: "beatriz parcel"
 * finds Beatriz's parcel). Postgres estimates prefix queries poorly, so the store decides the
 * plan itself, per word and side. Messages: a word the statistics say is in more than
 * RARE_WORD_HITS messages is common at once (word-frequency.ts); otherwise its hits are gathered
 * through the GIN index, at most RARE_WORD_HITS + 1. Contacts: gathered the same way (contacts
 * are few; their GIN index is cheap to read), within the caller's inboxes when the list is kept
 * to some (the index holds the inboxes each contact was seen in). A word rare on both sides narrows the list to the
 * conversations among its hits (a few primary-key lookups). Otherwise the list walks its sort
 * index and checks each conversation until the page is full. A `narrowed` search (an Agent's,
 * one inbox's or team's) whose words are rare in messages and held by at most CONTACT_LED_MAX
 * contacts is `gathered` instead: the conversations of those contacts and messages first, then
 * sorted. Every plan answers the same rows in the same order.
 */
export async function searchCondition(db: Kysely<Tables>, workspaceId: string, words: string[], scope: SearchScope): Promise<Search> {
  const { narrowed, inboxes } = scope;
  if (words.length === 0) return { condition: () => sql<SqlBool>`false`, gathered: false, walked: false };
  let candidates: Set<string> | undefined;
  let gathered = false;
  const walked: SearchCondition[] = [];
  for (const word of words) {
    const contacts = await sideOf(contactsMatching(db, workspaceId, word, inboxes));
    const messages = (await messagesWithWord(db, word)) > RARE_WORD_HITS ? 'many' : await sideOf(messagesMatching(db, workspaceId, word));
    if (narrowed && messages !== 'many' && contacts !== 'many' && contacts.length <= CONTACT_LED_MAX) {
      gathered = true;
      walked.push(matching(contacts, messages, db, workspaceId, word, inboxes));
      continue;
    }
    if (contacts === 'many' || messages === 'many') {
      walked.push(matching(contacts, messages, db, workspaceId, word, inboxes));
      continue;
    }
    const ofContacts = contacts.length === 0 ? [] : await db.selectFrom('helpdesk_conversations').select('id').where('contact_id', 'in', contacts).limit(RARE_WORD_HITS + 1).execute();
    if (ofContacts.length > RARE_WORD_HITS) {
      walked.push(matching(contacts, messages, db, workspaceId, word, inboxes));
      continue;
    }
    const ids = new Set([...ofContacts.map((c) => c.id), ...messages]);
    candidates = candidates === undefined ? ids : new Set([...candidates].filter((id) => ids.has(id)));
  }
  if (candidates === undefined) return { condition: (eb) => eb.and(walked.map((m) => m(eb))), gathered, walked: !gathered };
  const among = [...candidates];
  if (among.length === 0) return { condition: () => sql<SqlBool>`false`, gathered: false, walked: false };
  return { condition: (eb) => eb.and([eb('c.id', 'in', among), ...walked.map((m) => m(eb))]), gathered, walked: false };
}

/** The ids a gathering query finds, or 'many' past RARE_WORD_HITS. */
async function sideOf(query: SelectQueryBuilder<Tables, any, { id: string }>): Promise<Side> {
  const rows = await query.limit(RARE_WORD_HITS + 1).execute();
  return rows.length > RARE_WORD_HITS ? 'many' : [...new Set(rows.map((r) => r.id))];
}
