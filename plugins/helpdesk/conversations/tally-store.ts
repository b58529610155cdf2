import { sql, type Kysely } from 'kysely';
import type { InboxTally } from '../../../core/helpdesk/conversations/inbox-list.ts';
import type { ConversationQuery } from '../../../core/helpdesk/conversations/inbox-query.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { Tables } from './search.ts';

/** The holder of a conversation no person and no agent bot holds (migration 0017). */
const NOBODY = '00000000-0000-0000-0000-000000000000';

/**
 * One tally per inbox the member sees (`onlyFor`: an Agent, who sees their inboxes only), zero
 * counts included, read from the counters a trigger keeps (migration 0017: a few rows per inbox,
 * one per holder) rather than counted over every OPEN conversation.
 */
export async function inboxTallies(db: Kysely<Tables>, workspaceId: string, me: string, onlyFor: string | undefined): Promise<InboxTally[]> {
  let q = db
    .selectFrom('helpdesk_inboxes as i')
    .leftJoin('helpdesk_inbox_tallies as t', 't.inbox_id', 'i.id')
    .where('i.workspace_id', '=', workspaceId);
  if (onlyFor !== undefined) q = q.where('i.id', 'in', db.selectFrom('helpdesk_inbox_members').select('inbox_id').where('user_id', '=', onlyFor));
  const sum = (column: 't.open' | 't.unread', holder?: string) => {
    const total = holder === undefined ? sql<string>`sum(${sql.ref(column)})` : sql<string>`sum(${sql.ref(column)}) filter (where t.holder = ${holder})`;
    return sql<string>`coalesce(${total}, 0)`;
  };
  const rows = await q
    .groupBy(['i.id', 'i.created_at'])
    .select([
      'i.id as inboxId',
      sum('t.open').as('open'),
      sum('t.unread').as('unread'),
      sum('t.open', me).as('mineOpen'),
      sum('t.unread', me).as('mineUnread'),
      sum('t.open', NOBODY).as('unassignedOpen'),
      sum('t.unread', NOBODY).as('unassignedUnread'),
    ])
    .orderBy('i.created_at')
    .orderBy('i.id')
    .execute();
  return rows.map((r) => ({
    inboxId: r.inboxId,
    open: Number(r.open),
    unread: Number(r.unread),
    mineOpen: Number(r.mineOpen),
    mineUnread: Number(r.mineUnread),
    unassignedOpen: Number(r.unassignedOpen),
    unassignedUnread: Number(r.unassignedUnread),
  }));
}

/**
 * The number of OPEN conversations a list query matches, from the same counters, when its
 * filters are ones they count by (the first page of each view: `status=OPEN`, a view, an inbox, an
 * assignee); undefined otherwise, and the list counts its matches itself. Exact, so it serves page
 * mode's `total` as well as keyset mode's capped one.
 */
export async function openTotal(db: Kysely<Tables>, workspaceId: string, query: ConversationQuery, me: string, onlyFor: string | undefined): Promise<number | undefined> {
  const countable =
    query.statuses?.length === 1 &&
    query.statuses[0] === 'OPEN' &&
    query.search === undefined &&
    query.teamId === undefined &&
    query.contactId === undefined &&
    !query.labels?.length &&
    query.priorities === undefined &&
    !query.createdFrom &&
    !query.createdTo &&
    !query.lastActivityFrom &&
    !query.lastActivityTo;
  if (!countable) return undefined;
  const holders = new Set<string>();
  if (query.view === 'mine') holders.add(me);
  if (query.view === 'unassigned' || query.assignee === 'none') holders.add(NOBODY);
  if (query.assignee !== undefined && query.assignee !== 'none') holders.add(query.assignee.userId);
  // Two different holders at once (mine and someone else's): nothing matches; ids that are not UUIDs match nothing either.
  if (holders.size > 1 || [...holders].some((h) => !isUuid(h)) || (query.inboxId !== undefined && !isUuid(query.inboxId))) return 0;
  let q = db
    .selectFrom('helpdesk_inbox_tallies as t')
    .innerJoin('helpdesk_inboxes as i', 'i.id', 't.inbox_id')
    .where('i.workspace_id', '=', workspaceId)
    .select(sql<string>`coalesce(sum(t.open), 0)`.as('open'));
  if (holders.size === 1) q = q.where('t.holder', '=', [...holders][0]!);
  if (query.inboxId !== undefined) q = q.where('t.inbox_id', '=', query.inboxId);
  if (onlyFor !== undefined) q = q.where('t.inbox_id', 'in', db.selectFrom('helpdesk_inbox_members').select('inbox_id').where('user_id', '=', onlyFor));
  const { open } = await q.executeTakeFirstOrThrow();
  return Number(open);
}

/** The OPEN conversations of some inboxes and of the whole workspace, from the counters (a plan choice: how much of the workspace those inboxes hold). */
export async function openShare(db: Kysely<Tables>, workspaceId: string, inboxIds: string[]): Promise<{ theirs: number; all: number }> {
  const theirs = inboxIds.length === 0 ? sql<string>`0` : sql<string>`coalesce(sum(t.open) filter (where t.inbox_id in (${sql.join(inboxIds)})), 0)`;
  const row = await db
    .selectFrom('helpdesk_inbox_tallies as t')
    .innerJoin('helpdesk_inboxes as i', 'i.id', 't.inbox_id')
    .where('i.workspace_id', '=', workspaceId)
    .select([theirs.as('theirs'), sql<string>`coalesce(sum(t.open), 0)`.as('all')])
    .executeTakeFirstOrThrow();
  return { theirs: Number(row.theirs), all: Number(row.all) };
}
