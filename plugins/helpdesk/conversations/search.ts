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
 * A name held by at most this many contacts, and at most CONTACT_LED_SHARE of them (by the
 * statistics; always up to RARE_WORD_HITS / 4), leads a narrowed search (an Agent's, or one
 * inbox's or team's): the matches are gathered first, their contacts' conversations by
 * `helpdesk_conversations_by_contact_idx`, then sorted. Walking the workspace's sort order instead
 * passes every conversation outside the caller's inboxes and every other contact's (about 400
 * rows a match for an Agent of a tenth of the conversations and a name of a fortieth of the
 * contacts). A name held by more is walked: an Agent's inboxes one by one (list-store.ts,
 * mergedWalk), about 40 rows a match. At 1,000,000 conversations gathering a name of 5,000
 * contacts read their 25,000 conversations (55–85 ms); the merged walk finds the page and its
 * count in under 20 ms.
 */
const CONTACT_LED_MAX = 1_000;
const CONTACT_LED_SHARE = 0.03;

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

function contactsMatching(db: Kysely<Tables>, workspaceId: string, word: string) {
  return db.selectFrom('helpdesk_contacts').select('id').where('workspace_id', '=', workspaceId).where(sql<boolean>`search_document @@ ${prefix(word)}`);
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
function matching(contacts: Side, messages: Side, db: Kysely<Tables>, workspaceId: string, word: string): SearchCondition {
  return (eb) =>
    eb.or([
      contacts === 'many' ? eb('c.contact_id', 'in', contactsMatching(db, workspaceId, word)) : contacts.length > 0 ? eb('c.contact_id', 'in', contacts) : sql<SqlBool>`false`,
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
 * are few; their GIN index is cheap to read). A word rare on both sides narrows the list to the
 * conversations among its hits (a few primary-key lookups). Otherwise the list walks its sort
 * index and checks each conversation until the page is full. A `narrowed` search (an Agent's,
 * one inbox's or team's) whose words are rare in messages and held by at most CONTACT_LED_MAX
 * contacts is `gathered` instead: the conversations of those contacts and messages first, then
 * sorted. Every plan answers the same rows in the same order.
 */
export async function searchCondition(db: Kysely<Tables>, workspaceId: string, words: string[], narrowed: boolean): Promise<Search> {
  if (words.length === 0) return { condition: () => sql<SqlBool>`false`, gathered: false, walked: false };
  let candidates: Set<string> | undefined;
  let gathered = false;
  const walked: SearchCondition[] = [];
  for (const word of words) {
    let contacts = await sideOf(contactsMatching(db, workspaceId, word));
    const messages = (await messagesWithWord(db, word)) > RARE_WORD_HITS ? 'many' : await sideOf(messagesMatching(db, workspaceId, word));
    if (narrowed && messages !== 'many' && (contacts !== 'many' || !gathered)) {
      // One word at most gathers past RARE_WORD_HITS contacts: they go as parameters.
      const most = Math.min(CONTACT_LED_MAX, Math.max(RARE_WORD_HITS / 4, CONTACT_LED_SHARE * (await contactsEstimate(db))));
      if (contacts === 'many' && most > RARE_WORD_HITS) contacts = await sideOf(contactsMatching(db, workspaceId, word), most);
      if (contacts !== 'many' && contacts.length <= most) {
        gathered = true;
        walked.push(matching(contacts, messages, db, workspaceId, word));
        continue;
      }
    }
    if (contacts === 'many' || messages === 'many') {
      walked.push(matching(contacts, messages, db, workspaceId, word));
      continue;
    }
    const ofContacts = contacts.length === 0 ? [] : await db.selectFrom('helpdesk_conversations').select('id').where('contact_id', 'in', contacts).limit(RARE_WORD_HITS + 1).execute();
    if (ofContacts.length > RARE_WORD_HITS) {
      walked.push(matching(contacts, messages, db, workspaceId, word));
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

/** The ids a gathering query finds, or 'many' past `most`. */
async function sideOf(query: SelectQueryBuilder<Tables, any, { id: string }>, most = RARE_WORD_HITS): Promise<Side> {
  const rows = await query.limit(most + 1).execute();
  return rows.length > most ? 'many' : [...new Set(rows.map((r) => r.id))];
}

/** About how many contacts there are (all workspaces: a plan choice), from the statistics; Infinity before the first ANALYZE. */
async function contactsEstimate(db: Kysely<Tables>): Promise<number> {
  const { rows } = await sql<{ n: number }>`select reltuples as n from pg_class where relname = 'helpdesk_contacts' and relnamespace = current_schema()::regnamespace`.execute(db);
  const n = Number(rows[0]?.n ?? -1);
  return n > 0 ? n : Infinity;
}
