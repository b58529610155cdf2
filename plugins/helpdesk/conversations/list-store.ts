import { sql, type ExpressionBuilder, type Kysely, type RawBuilder, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import { CONVERSATION_STATUSES } from '../../../core/helpdesk/conversations/conversation-status.ts';
import { LAST_MESSAGE_PREVIEW, type ConversationListStore, type ConversationListStores, type ListedConversation } from '../../../core/helpdesk/conversations/inbox-list.ts';
import type { ConversationQuery, Keyset } from '../../../core/helpdesk/conversations/inbox-query.ts';
import { helpdeskDb } from '../tables.ts';
import { labelStore } from '../labels/store.ts';
import { toConversation } from './store.ts';
import { searchCondition, type Search, type SearchCondition, type Tables } from './search.ts';
import { inboxTallies, openShare, openTotal } from './tally-store.ts';

type Conversations = SelectQueryBuilder<Tables, 'c', object>;
type Eb = ExpressionBuilder<Tables, 'c'>;

/** An id filter: a value that is not a UUID matches nothing (as before), rather than erring in the database. */
const byId = (q: Conversations, column: 'c.inbox_id' | 'c.team_id' | 'c.assignee_user_id' | 'c.contact_id', id: string) => (isUuid(id) ? q.where(column, '=', id) : q.where(sql<boolean>`false`));

const nobodyHolds = (eb: Eb) => eb.and([eb('c.assignee_user_id', 'is', null), eb('c.assignee_agent_bot_id', 'is', null)]);

function filtered(db: Kysely<Tables>, workspaceId: string, query: ConversationQuery, me: string, onlyFor: string | undefined, search: SearchCondition | undefined): Conversations {
  let q: Conversations = db.selectFrom('helpdesk_conversations as c').where('c.workspace_id', '=', workspaceId);
  if (onlyFor !== undefined) q = q.where('c.inbox_id', 'in', db.selectFrom('helpdesk_inbox_members').select('inbox_id').where('user_id', '=', onlyFor));
  if (query.view === 'mine') q = q.where('c.assignee_user_id', '=', me);
  if (query.view === 'unassigned' || query.assignee === 'none') q = q.where(nobodyHolds);
  if (query.assignee !== undefined && query.assignee !== 'none') q = byId(q, 'c.assignee_user_id', query.assignee.userId);
  if (query.inboxId !== undefined) q = byId(q, 'c.inbox_id', query.inboxId);
  if (query.teamId !== undefined) q = byId(q, 'c.team_id', query.teamId);
  if (query.contactId !== undefined) q = byId(q, 'c.contact_id', query.contactId);
  if (query.statuses) q = q.where('c.status', 'in', query.statuses);
  if (query.priorities) q = q.where('c.priority', 'in', query.priorities);
  if (query.labels?.length) q = q.where('c.labels', '@>', sql<string[]>`array[${sql.join(query.labels)}]::text[]`);
  if (query.createdFrom) q = q.where('c.created_at', '>=', query.createdFrom);
  if (query.createdTo) q = q.where('c.created_at', '<=', query.createdTo);
  if (query.lastActivityFrom) q = q.where('c.last_activity_at', '>=', query.lastActivityFrom);
  if (query.lastActivityTo) q = q.where('c.last_activity_at', '<=', query.lastActivityTo);
  if (search !== undefined) q = q.where(search);
  return q;
}

/**
 * The matches as a subquery Postgres plans on its own (`offset 0` keeps it from being merged
 * into the sort and limit around it): gathered through their own indexes, then sorted, instead
 * of found by walking the sort order (search.ts: CONTACT_LED_MAX).
 */
function gatheredFirst(db: Kysely<Tables>, matches: Conversations): Conversations {
  return db.selectFrom(matches.selectAll('c').offset(0).as('c')) as unknown as Conversations;
}

/** A cursor's date (checked by core's decodeCursor). */
const date = (value: string | number | null | undefined) => new Date(value as string);

/**
 * Each sort is a total order ending in the id, so a keyset (the last row's key and id) says
 * exactly where the next page starts, however many conversations arrive meanwhile.
 */
function sorted(q: Conversations, query: ConversationQuery) {
  const after = query.after;
  if (after) {
    switch (query.sort) {
      case 'last_activity':
        q = q.where((eb) => eb(eb.refTuple('c.last_activity_at', 'c.id'), '<', eb.tuple(date(after.key[0]), after.id)));
        break;
      case 'created':
        q = q.where((eb) => eb(eb.refTuple('c.created_at', 'c.id'), '<', eb.tuple(date(after.key[0]), after.id)));
        break;
      case 'priority':
        q = q.where((eb) => eb(eb.refTuple('c.priority_rank', 'c.last_activity_at', 'c.id'), '<', eb.tuple(Number(after.key[0]), date(after.key[1]), after.id)));
        break;
      case 'waiting':
        q = q.where(waitingAfter(after));
        break;
    }
  }
  return q.orderBy(ORDER[query.sort]);
}

/** Each sort's order (as the indexes of migrations/0016 hold it); waiting: nobody waiting comes last, by id. */
const ORDER: Record<ConversationQuery['sort'], RawBuilder<unknown>> = {
  last_activity: sql`c.last_activity_at desc, c.id desc`,
  created: sql`c.created_at desc, c.id desc`,
  priority: sql`c.priority_rank desc, c.last_activity_at desc, c.id desc`,
  waiting: sql`c.waiting_since asc nulls last, c.id asc`,
};

function waitingAfter(after: Keyset) {
  return (eb: Eb) =>
    after.key[0] === null
      ? eb.and([eb('c.waiting_since', 'is', null), eb('c.id', '>', after.id)])
      : eb.or([eb(eb.refTuple('c.waiting_since', 'c.id'), '>', eb.tuple(date(after.key[0]), after.id)), eb('c.waiting_since', 'is', null)]);
}

/**
 * The page's rows with what the list shows of each: the contact (by primary key) and the latest
 * message that is not an activity line (one backward step of `helpdesk_messages_conversation_idx`,
 * ids being UUID v7). Joined to the page once it is cut, so a long match costs no more than before.
 */
function withRowSummary(db: Kysely<Tables>, page: SelectQueryBuilder<Tables, 'c', Selectable<Tables['c']>>, query: ConversationQuery) {
  return db
    .selectFrom(page.as('c'))
    .leftJoin('helpdesk_contacts as ct', 'ct.id', 'c.contact_id')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('helpdesk_messages as m')
          .whereRef('m.conversation_id', '=', 'c.id')
          .where('m.direction', '<>', 'activity')
          .orderBy('m.id', 'desc')
          .limit(1)
          .select([sql<string>`left(m.content, ${LAST_MESSAGE_PREVIEW})`.as('content'), 'm.direction', 'm.private', 'm.created_at'])
          .as('lm'),
      (join) => join.onTrue(),
    )
    .selectAll('c')
    .select([
      'ct.name as contact_name',
      'ct.phone as contact_phone',
      'ct.email as contact_email',
      'lm.content as last_content',
      'lm.direction as last_direction',
      'lm.private as last_private',
      'lm.created_at as last_created_at',
      // The counts' rule (tally below): a contact message after the read marker, or none set.
      sql<boolean>`c.last_incoming_at is not null and c.last_incoming_at > coalesce(c.assignee_last_seen_at, '-infinity'::timestamptz)`.as('unread'),
    ])
    .orderBy(ORDER[query.sort]);
}

/**
 * The inboxes a list is limited to, when it is: an Agent's (read here, an index lookup, so the
 * list can name them), one inbox, or both at once. Undefined: the workspace's (or a team's).
 */
async function inboxesListed(db: Kysely<Tables>, query: ConversationQuery, onlyFor: string | undefined): Promise<string[] | undefined> {
  if (query.inboxId !== undefined && !isUuid(query.inboxId)) return [];
  let inboxes = query.inboxId === undefined ? undefined : [query.inboxId];
  if (onlyFor !== undefined) {
    const theirs = (await db.selectFrom('helpdesk_inbox_members').select('inbox_id').where('user_id', '=', onlyFor).execute()).map((m) => m.inbox_id);
    inboxes = inboxes === undefined ? theirs : inboxes.filter((id) => theirs.includes(id));
  }
  return inboxes;
}

/** Walking one inbox's order per status costs a scan each: past this many, the workspace's order is walked instead. */
const MAX_WALKS = 64;
/**
 * The inboxes are walked one by one when they hold less than 1 in this many of the workspace's
 * OPEN conversations (the counters' figure, standing for every status): the workspace's walk then
 * passes over 20 rows per match; for a larger share it finds a page within a few hundred rows,
 * cheaper than planning a walk per inbox and status.
 */
const WALKED_SHARE = 20;

/**
 * The inboxes whose orders a list walks one by one and merges, when the caller is limited to
 * some inboxes (an Agent) or asks for one and they hold a small share of the workspace: walking
 * the workspace's order past every other inbox's conversations would read them all when theirs
 * hold few. Undefined: the workspace's order (or the assignee's, the contact's, a search's
 * gathered matches) leads.
 */
async function inboxesToWalk(db: Kysely<Tables>, workspaceId: string, query: ConversationQuery, inboxes: string[] | undefined, search: Search | undefined): Promise<string[] | undefined> {
  const otherLead = query.view === 'mine' || (query.assignee !== undefined && query.assignee !== 'none') || query.contactId !== undefined || (search !== undefined && !search.walked);
  if (otherLead || (query.inboxId !== undefined && !isUuid(query.inboxId))) return undefined;
  if (inboxes === undefined || inboxes.length * (query.statuses ?? CONVERSATION_STATUSES).length > MAX_WALKS) return undefined;
  if (inboxes.length === 0) return inboxes;
  // Walks cost a plan each: worth it only when the workspace's walk would pass many others' rows.
  const { theirs, all } = await openShare(db, workspaceId, inboxes);
  return theirs * WALKED_SHARE < all ? inboxes : undefined;
}

const among = (q: Conversations, inboxes: string[]) => (inboxes.length === 0 ? q.where(sql<boolean>`false`) : q.where('c.inbox_id', 'in', inboxes));

/**
 * The page as a merge of one ordered walk per inbox and status (each an index scan of
 * (inbox, status, sort key, id), migrations 0016 and 0019, stopping at a page), in the same
 * total order and with the same keyset as the workspace's walk: each walk starts after the
 * cursor and the merge cuts the page.
 */
function mergedWalk(db: Kysely<Tables>, inboxes: string[], matchesOf: (inboxId: string, status: (typeof CONVERSATION_STATUSES)[number]) => Conversations, query: ConversationQuery, rows: number) {
  const walks = inboxes.flatMap((inboxId) =>
    (query.statuses ?? CONVERSATION_STATUSES).map((status) =>
      db
        .selectFrom(
          sorted(matchesOf(inboxId, status), query)
            .selectAll('c')
            .limit(query.offset + rows)
            .as('c'),
        )
        .selectAll('c'),
    ),
  );
  const merged = walks.slice(1).reduce((all, walk) => all.unionAll(walk), walks[0]!);
  return (db as unknown as Kysely<Tables>).selectFrom(merged.as('c')).selectAll('c').orderBy(ORDER[query.sort]).limit(rows).offset(query.offset);
}

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

export function conversationListStore(base: Kysely<Database>): ConversationListStore {
  const db = helpdeskDb(base) as unknown as Kysely<Tables>;
  return {
    async find(workspaceId, query, me, onlyFor) {
      const narrowed = onlyFor !== undefined || query.inboxId !== undefined || query.teamId !== undefined;
      const inboxes = await inboxesListed(db, query, onlyFor);
      const search = query.search === undefined ? undefined : await searchCondition(db, workspaceId, query.search, { narrowed, inboxes });
      const walk = await inboxesToWalk(db, workspaceId, query, inboxes, search);
      const found = walk === undefined ? filtered(db, workspaceId, query, me, onlyFor, search?.condition) : among(filtered(db, workspaceId, query, me, undefined, search?.condition), walk);
      const matches = search?.gathered ? gatheredFirst(db, found) : found;
      const tallied = await openTotal(db, workspaceId, query, me, onlyFor);
      // Pages are cut from the walk of the sort order (or the merge of one walk per inbox), up
      // to `rows` rows from the cursor.
      const walked = (rows: number, from: ConversationQuery) =>
        walk === undefined || walk.length === 0
          ? sorted(matches, from).selectAll('c').limit(rows).offset(from.offset)
          : mergedWalk(db, walk, (inboxId, status) => filtered(db, workspaceId, { ...query, inboxId, statuses: [status] }, me, undefined, search?.condition), from, rows);
      let total: number | undefined = tallied;
      let page = walked(query.limit + 1, query);
      if (total === undefined && (query.countUpTo === undefined || search?.gathered)) {
        // Page mode counts exactly; a gathered search counts every match (a few thousand at
        // most): under a limit, Postgres would walk the table hoping to stop early.
        total = Number((await matches.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow()).total);
      } else if (total === undefined && query.after === undefined && query.offset === 0) {
        // Keyset mode counts up to countUpTo + 1 matches along the same walk as the page: the
        // first page is the head of that walk, counted in the same query. A count without an
        // order would let Postgres scan the table for them instead.
        page = db
          .selectFrom(walked(query.countUpTo! + 1, query).as('c'))
          .selectAll('c')
          .select(sql<string>`count(*) over ()`.as('matched'))
          .orderBy(ORDER[query.sort])
          .limit(query.limit + 1) as unknown as typeof page;
      } else if (total === undefined) {
        const counted = db.selectFrom(walked(query.countUpTo! + 1, { ...query, after: undefined, offset: 0 }).as('capped')).select((eb) => eb.fn.countAll<string>().as('total'));
        total = Number((await counted.executeTakeFirstOrThrow()).total);
      }
      const rows = await withRowSummary(db, page, query).execute();
      const listed = rows.map((row): ListedConversation => {
        const key: Keyset['key'] = {
          last_activity: [iso(row.last_activity_at)],
          created: [iso(row.created_at)],
          priority: [row.priority_rank, iso(row.last_activity_at)],
          waiting: [iso(row.waiting_since)],
        }[query.sort];
        const { contact_name, contact_phone, contact_email, last_content, last_direction, last_private, last_created_at, unread, matched: _matched, ...conversation } = row as typeof row & { matched?: string };
        return {
          conversation: {
            ...toConversation(conversation),
            contact: { id: row.contact_id, name: contact_name, phone: contact_phone, email: contact_email },
            lastMessage:
              last_created_at === null ? null : { content: last_content!, direction: last_direction as 'incoming' | 'outgoing', private: Boolean(last_private), createdAt: new Date(last_created_at) },
            unread: Boolean(unread),
          },
          key,
        };
      });
      // Counted along the walk: the first row carries the count (none matched: none).
      const counted = total ?? Number((rows[0] as { matched?: string } | undefined)?.matched ?? 0);
      return { rows: listed, total: search?.gathered && query.countUpTo !== undefined ? Math.min(counted, query.countUpTo + 1) : counted };
    },
    tally: (workspaceId, me, onlyFor) => inboxTallies(db, workspaceId, me, onlyFor),
  };
}

export function conversationListStores(base: Kysely<Database>, _ctx: PluginContext): ConversationListStores {
  return { conversationList: conversationListStore(base), labels: labelStore(base) };
}
