import type { Kysely } from 'kysely';
import { indexBy } from '../../../../plugins/kernel/table-indexes.ts';

/**
 * Sign-in sessions for every member (issue 22): a public id to list and end them by, when each
 * was last used, a sliding idle expiry (`expires_at`) under an absolute one, and the browser that
 * started it. Sessions started before this migration have none of these: they end here (their
 * people sign in again).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('web_sessions').execute();
  await db.schema
    .alterTable('web_sessions')
    .addColumn('id', 'uuid', (c) => c.notNull().unique())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('absolute_expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .execute();
  await indexBy(db, 'web_sessions', 'user');
}
