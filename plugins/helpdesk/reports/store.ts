import { sql, type Expression, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { HolderChange, ReportConversation, ReportFacts, ReportGrouping, ReportStore, ReportStores } from '../../../core/helpdesk/reports/reports.ts';
import { inboxStore } from '../inboxes/inbox-and-contact-stores.ts';
import { helpdeskDb, type HelpdeskDatabase } from '../tables.ts';
import { isUuid } from '../../../core/shared/ids.ts';

/**
 * The facts of a report (core/helpdesk/reports/reports.ts), read with one query per kind of fact, every
 * one bounded by the range. Opened and resolved come from the durable event log (helpdesk
 * events are `events` rows with no connection, payload `{ event, data: <event object> }`), so
 * they keep what happened even when the conversation changed since; each fact is joined to its
 * conversation, and a deleted conversation leaves the reports with its messages.
 */

/** A text field of a helpdesk event's object: `payload -> 'data' ->> 'field'` (jsonb). */
function eventField(field: string): RawBuilder<string | null> {
  return sql<string | null>`${sql.ref('e.payload')}->'data'->>${sql.lit(field)}`;
}

/** The conversation an event is about, as a uuid (helpdesk events always carry `conversationId`). */
const eventConversation = (): Expression<string> => sql<string>`(${eventField('conversationId')})::uuid`;

const CONVERSATION_COLUMNS = ['c.id', 'c.inbox_id', 'c.created_at', 'c.assignee_user_id', 'c.team_id', 'c.labels'] as const;

type ConversationRow = { id: string; inbox_id: string; created_at: Date; assignee_user_id: string | null; team_id: string | null; labels: string[] };

const toConversation = (r: ConversationRow): ReportConversation => ({
  id: r.id,
  inboxId: r.inbox_id,
  createdAt: new Date(r.created_at),
  assigneeUserId: r.assignee_user_id,
  teamId: r.team_id,
  labels: r.labels ?? [],
});

/** The ports of the reports: the facts, and the inboxes (an Agent's and a named one's). */
export function reportStores(base: Kysely<Database>, ctx: PluginContext): ReportStores {
  return { reports: reportStore(base), inboxes: inboxStore(base, ctx.box) };
}

/** Big enough for few round trips, small enough for any statement's parameter limit. */
const CHUNK = 500;

export function reportStore(base: Kysely<Database>): ReportStore {
  const db = helpdeskDb(base);

  /** Helpdesk events of one type in the window, each with its conversation (of the inbox, if one is asked for). */
  const conversationEvents = (workspaceId: string, type: string, window: { start: Date; end: Date; inboxId: string | null }) => {
    let query = db
      .selectFrom('events as e')
      .innerJoin('helpdesk_conversations as c', (join) => join.on((eb) => eb(eb.ref('c.id'), '=', eventConversation())))
      .where('e.workspace_id', '=', workspaceId)
      .where('e.connection_id', 'is', null)
      .where('e.event', '=', type)
      .where('e.created_at', '>=', window.start)
      .where('e.created_at', '<=', window.end)
      .where('c.workspace_id', '=', workspaceId);
    if (window.inboxId) query = query.where('c.inbox_id', '=', window.inboxId);
    return query.select(CONVERSATION_COLUMNS).select(['e.created_at as at']);
  };

  return {
    async facts(workspaceId, window) {
      const conversations = new Map<string, ReportConversation>();
      const keep = (rows: (ConversationRow & { at: Date })[]) =>
        rows.map((r) => {
          if (!conversations.has(r.id)) conversations.set(r.id, toConversation(r));
          return { conversationId: r.id, at: new Date(r.at) };
        });

      const opened = keep(await conversationEvents(workspaceId, 'helpdesk.conversation.created', window).execute());
      const resolved = keep(await conversationEvents(workspaceId, 'helpdesk.conversation.status_changed', window).where(eventField('toStatus'), '=', 'RESOLVED').execute());
      const firstReplies = keep(await firstReplyRows(db, workspaceId, window));

      let csatQuery = db
        .selectFrom('helpdesk_csat_responses as r')
        .innerJoin('helpdesk_conversations as c', 'c.id', 'r.conversation_id')
        .where('r.workspace_id', '=', workspaceId)
        .where('r.submitted_at', '>=', window.start)
        .where('r.submitted_at', '<=', window.end);
      if (window.inboxId) csatQuery = csatQuery.where('r.inbox_id', '=', window.inboxId);
      const csatRows = await csatQuery.select(CONVERSATION_COLUMNS).select(['r.submitted_at as at', 'r.rating', 'r.inbox_id as rated_inbox_id', 'r.assignee_user_id as rated_user_id', 'r.team_id as rated_team_id']).execute();
      const csat = keep(csatRows).map((m, i) => ({
        ...m,
        rating: Number(csatRows[i]!.rating),
        inboxId: csatRows[i]!.rated_inbox_id,
        assigneeUserId: csatRows[i]!.rated_user_id,
        teamId: csatRows[i]!.rated_team_id,
      }));

      // A breach is dated by its round's due time: when the promise was broken (the worker may notice later).
      let breachQuery = db
        .selectFrom('helpdesk_sla_breaches as b')
        .innerJoin('helpdesk_conversations as c', 'c.id', 'b.conversation_id')
        .where('b.workspace_id', '=', workspaceId)
        .where('b.due_at', '>=', window.start)
        .where('b.due_at', '<=', window.end);
      if (window.inboxId) breachQuery = breachQuery.where('b.inbox_id', '=', window.inboxId);
      const breachRows = await breachQuery.select(CONVERSATION_COLUMNS).select(['b.due_at as at', 'b.target']).execute();
      const slaBreaches = keep(breachRows).map((m, i) => ({ ...m, target: breachRows[i]!.target }));

      const holderChanges = window.holders ? await holderChangeRows(db, workspaceId, window.end, [...conversations.keys()]) : [];
      const facts: ReportFacts = { conversations: [...conversations.values()], opened, resolved, firstReplies, csat, slaBreaches, holderChanges };
      return facts;
    },

    async names(workspaceId, groupBy, keys) {
      const names = new Map<string, string>();
      for (let i = 0; i < keys.length; i += CHUNK) {
        const chunk = keys.slice(i, i + CHUNK);
        for (const [key, name] of await nameRows(db, workspaceId, groupBy, chunk)) names.set(key, name);
      }
      return names;
    },
  };
}

/** Replies that are their conversation's first response and fall in the window (see ReportFacts). */
function firstReplyRows(db: Kysely<HelpdeskDatabase>, workspaceId: string, window: { start: Date; end: Date; inboxId: string | null }) {
  // A response: outgoing, not a private note, written by a person or an agent bot — the
  // helpdesk's own texts (CSAT link, out-of-office) have neither. Messages dated before the
  // conversation began (history imported into it) answer nothing in it.
  let query = db
    .selectFrom('helpdesk_messages as m')
    .innerJoin('helpdesk_conversations as c', 'c.id', 'm.conversation_id')
    .where('m.workspace_id', '=', workspaceId)
    .where('m.direction', '=', 'outgoing')
    .where('m.private', '=', false)
    .where((eb) => eb.or([eb('m.sender_user_id', 'is not', null), eb('m.sender_agent_bot_id', 'is not', null)]))
    .where('m.created_at', '>=', window.start)
    .where('m.created_at', '<=', window.end)
    .whereRef('m.created_at', '>=', 'c.created_at')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('helpdesk_messages as p')
            .select('p.id')
            .whereRef('p.conversation_id', '=', 'm.conversation_id')
            .where('p.direction', '=', 'outgoing')
            .where('p.private', '=', false)
            .where((inner) => inner.or([inner('p.sender_user_id', 'is not', null), inner('p.sender_agent_bot_id', 'is not', null)]))
            .whereRef('p.created_at', '>=', 'c.created_at')
            .where((inner) => inner.or([inner('p.created_at', '<', inner.ref('m.created_at')), inner.and([inner('p.created_at', '=', inner.ref('m.created_at')), inner('p.id', '<', inner.ref('m.id'))])])),
        ),
      ),
    );
  if (window.inboxId) query = query.where('c.inbox_id', '=', window.inboxId);
  return query.select(CONVERSATION_COLUMNS).select(['m.created_at as at']).execute();
}

/** The `assignee_changed` events of these conversations up to the end of the range, oldest first. */
async function holderChangeRows(db: Kysely<HelpdeskDatabase>, workspaceId: string, end: Date, conversationIds: string[]): Promise<HolderChange[]> {
  const changes: HolderChange[] = [];
  for (let i = 0; i < conversationIds.length; i += CHUNK) {
    const chunk = conversationIds.slice(i, i + CHUNK);
    const rows = await db
      .selectFrom('events as e')
      .where('e.workspace_id', '=', workspaceId)
      .where('e.connection_id', 'is', null)
      .where('e.event', '=', 'helpdesk.conversation.assignee_changed')
      .where('e.created_at', '<=', end)
      .where(eventField('conversationId'), 'in', chunk)
      .select([
        'e.created_at as at',
        eventField('conversationId').as('conversation_id'),
        eventField('fromAssigneeUserId').as('from_user_id'),
        eventField('toAssigneeUserId').as('to_user_id'),
        eventField('fromTeamId').as('from_team_id'),
        eventField('toTeamId').as('to_team_id'),
      ])
      .orderBy('e.created_at')
      .orderBy('e.id')
      .execute();
    for (const r of rows) {
      changes.push({ conversationId: r.conversation_id!, at: new Date(r.at), fromUserId: r.from_user_id, toUserId: r.to_user_id, fromTeamId: r.from_team_id, toTeamId: r.to_team_id });
    }
  }
  return changes;
}

async function nameRows(db: Kysely<HelpdeskDatabase>, workspaceId: string, groupBy: ReportGrouping, keys: string[]): Promise<[string, string][]> {
  const uuids = keys.filter(isUuid);
  if (groupBy === 'label') {
    const rows = await db.selectFrom('helpdesk_labels').select(['name_key', 'name']).where('workspace_id', '=', workspaceId).where('name_key', 'in', keys).execute();
    return rows.map((r) => [r.name_key, r.name]);
  }
  if (uuids.length === 0) return [];
  if (groupBy === 'inbox') {
    const rows = await db.selectFrom('helpdesk_inboxes').select(['id', 'name']).where('workspace_id', '=', workspaceId).where('id', 'in', uuids).execute();
    return rows.map((r) => [r.id, r.name]);
  }
  if (groupBy === 'team') {
    const rows = await db.selectFrom('helpdesk_teams').select(['id', 'name']).where('workspace_id', '=', workspaceId).where('id', 'in', uuids).execute();
    return rows.map((r) => [r.id, r.name]);
  }
  // Agents: any user, a former member too (their past work stays theirs in the report).
  const rows = await db.selectFrom('users').select(['id', 'name', 'email']).where('id', 'in', uuids).execute();
  return rows.map((r) => [r.id, r.name || r.email]);
}
