import type { Kysely } from 'kysely';
import type { Database } from '../kernel/storage.ts';

/** The people of an inbox or of a team: rows of user ids under the owner's row. */
const MEMBER_LISTS = {
  inbox: { owners: 'helpdesk_inboxes', members: 'helpdesk_inbox_members', ownerColumn: 'inbox_id' },
  team: { owners: 'helpdesk_teams', members: 'helpdesk_team_members', ownerColumn: 'team_id' },
} as const;

/**
 * Replaces the members of one inbox or team. The owner's row lock serializes two replacements of
 * one list (no duplicate-key 500).
 */
export async function replaceMembers(base: Kysely<Database>, list: keyof typeof MEMBER_LISTS, ownerId: string, userIds: readonly string[]): Promise<void> {
  const { owners, members, ownerColumn } = MEMBER_LISTS[list];
  // The two lists have the same shape under different names (migrations 0001 and 0006): Kysely cannot type a column chosen by value.
  const db = base as unknown as Kysely<Record<string, Record<string, unknown>>>;
  await db.selectFrom(owners).select('id').where('id', '=', ownerId).forUpdate().execute();
  await db.deleteFrom(members).where(ownerColumn, '=', ownerId).execute();
  if (userIds.length === 0) return;
  const now = new Date();
  await db
    .insertInto(members)
    .values(userIds.map((userId) => ({ [ownerColumn]: ownerId, user_id: userId, created_at: now })))
    .execute();
}
