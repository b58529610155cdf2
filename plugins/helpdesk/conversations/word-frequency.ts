import { sql, type Kysely } from 'kysely';

/** How long the statistics read from the catalogue serve (ANALYZE renews them far more rarely). */
const STATISTICS_TTL_MS = 60_000;

interface WordStatistics {
  /** The most common words of the message text and the share of messages holding each. */
  shares: Map<string, number>;
  messages: number;
  readAt: number;
}

const cached = new WeakMap<Kysely<any>, WordStatistics>();

/**
 * About how many messages hold a word starting with `prefix`, from the statistics ANALYZE keeps
 * on `helpdesk_messages_search_idx` (the most common words and their shares, migration 0016),
 * without touching the index itself: for a common word, gathering its hits through the GIN index
 * builds a bitmap of every one (2.5 million at 5,000,000 messages: 600 ms) before any limit
 * applies. A word outside the most common ones counts 0 (rarer than all of them); so does every
 * word before the first ANALYZE. Across workspaces: a plan choice, never a result.
 */
export async function messagesWithWord(db: Kysely<any>, prefix: string): Promise<number> {
  const statistics = await wordStatistics(db);
  let share = 0;
  for (const [word, s] of statistics.shares) if (word.startsWith(prefix)) share += s;
  return share * statistics.messages;
}

async function wordStatistics(db: Kysely<any>): Promise<WordStatistics> {
  const known = cached.get(db);
  if (known && Date.now() - known.readAt < STATISTICS_TTL_MS) return known;
  const { rows } = await sql<{ words: string[] | null; shares: number[] | null; messages: number | null }>`
    select s.most_common_elems::text::text[] as words, s.most_common_elem_freqs as shares, c.reltuples as messages
    from pg_class c
    left join pg_stats s on s.tablename = c.relname and s.schemaname = current_schema()
    where c.relname = 'helpdesk_messages_search_idx' and c.relnamespace = current_schema()::regnamespace`.execute(db);
  const row = rows[0];
  const shares = new Map<string, number>();
  (row?.words ?? []).forEach((word, i) => shares.set(word, Number(row!.shares![i])));
  const statistics = { shares, messages: Math.max(0, Number(row?.messages ?? 0)), readAt: Date.now() };
  cached.set(db, statistics);
  return statistics;
}
