import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { HelpdeskTables } from '../tables.ts';

export type Tables = Database & HelpdeskTables & { c: HelpdeskTables['helpdesk_conversations'] };
type Eb = ExpressionBuilder<Tables, 'c'>;
export type SearchCondition = (eb: Eb) => Expression<SqlBool>;

/**
 * Above this many hits a word is common: the list walks its sort order and checks each
 * conversation (stopping at a page), rather than gathering every hit first.
 */
const RARE_WORD_HITS = 2000;

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
 * messages (not activity lines) does. Checked row by row (correlated: the contact by its key,
 * the messages by `helpdesk_messages_conversation_idx`): for a common word the walk finds a page
 * after a few rows, where gathering every hit first would read them all. `offset 0` keeps each
 * EXISTS a per-row subplan: without it Postgres turns it into a hashed set of every hit
 * (125,000 messages for "refund" at 200,000 conversations: 220 ms instead of 25 ms).
 */
function matching(word: string): SearchCondition {
  return (eb) =>
    eb.or([
      eb.exists(eb.selectFrom('helpdesk_contacts as ct').select(sql`1`.as('one')).whereRef('ct.id', '=', 'c.contact_id').where(sql<boolean>`ct.search_document @@ ${prefix(word)}`).offset(0)),
      eb.exists(
        eb
          .selectFrom('helpdesk_messages as m')
          .select(sql`1`.as('one'))
          .whereRef('m.conversation_id', '=', 'c.id')
          .where('m.direction', '<>', 'activity')
          .where(sql<boolean>`to_tsvector('simple', m.content) @@ ${prefix(word)}`)
          .offset(0),
      ),
    ]);
}

/**
 * The search, every word required (each may match the contact or any message: "beatriz parcel"
 * finds Beatriz's parcel). Postgres estimates prefix queries poorly, so the store decides the
 * plan itself: it first gathers each word's hits through the GIN indexes, at most
 * RARE_WORD_HITS + 1. If some word is rare, the list is the conversations among its hits (a few
 * primary-key lookups); the other words are checked on those only. If every word is common, the
 * list walks its sort index and checks each conversation until the page is full.
 */
export async function searchCondition(db: Kysely<Tables>, workspaceId: string, words: string[]): Promise<SearchCondition> {
  if (words.length === 0) return () => sql<SqlBool>`false`;
  let candidates: Set<string> | undefined;
  const common: string[] = [];
  for (const word of words) {
    // Three plain queries, each planned on its own index, rather than one the planner misjudges.
    const contacts = await contactsMatching(db, workspaceId, word).limit(RARE_WORD_HITS + 1).execute();
    const ofContacts =
      contacts.length === 0 || contacts.length > RARE_WORD_HITS
        ? []
        : await db.selectFrom('helpdesk_conversations').select('id').where('contact_id', 'in', contacts.map((c) => c.id)).limit(RARE_WORD_HITS + 1).execute();
    const ofMessages = contacts.length > RARE_WORD_HITS ? [] : await messagesMatching(db, workspaceId, word).limit(RARE_WORD_HITS + 1).execute();
    const hits = contacts.length > RARE_WORD_HITS ? contacts : [...ofContacts, ...ofMessages];
    if (hits.length > RARE_WORD_HITS) {
      common.push(word);
      continue;
    }
    const ids = new Set(hits.map((h) => h.id));
    candidates = candidates === undefined ? ids : new Set([...candidates].filter((id) => ids.has(id)));
  }
  const rest = common.map(matching);
  if (candidates === undefined) return (eb) => eb.and(rest.map((m) => m(eb)));
  const among = [...candidates];
  if (among.length === 0) return () => sql<SqlBool>`false`;
  return (eb) => eb.and([eb('c.id', 'in', among), ...rest.map((m) => m(eb))]);
}
