import { sql, type Kysely, type Selectable } from 'kysely';
import { camelCased, snakeCased, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { Clock } from '../../../core/shared/ports.ts';
import type { Outbox } from '../../../core/shared/outbox.ts';
import type { ConversationSlaStores } from '../../../core/helpdesk/sla/conversation-sla.ts';
import type { ConversationTiming } from '../../../core/helpdesk/sla/sla.ts';
import { SLA_DEADLINE_QUEUE, type SlaBreach, type SlaDeadlineJob, type SlaTrackingStores } from '../../../core/helpdesk/sla/tracking.ts';
import { conversationStores } from '../conversations/store.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { helpdeskDb, type HelpdeskConversationTimingTable, type HelpdeskSlaBreachesTable } from '../tables.ts';
import { inboxCalendar, slaPolicyStore } from './store.ts';

const toTiming = (row: Selectable<HelpdeskConversationTimingTable>): ConversationTiming => camelCased(row);

/** All but the key: what a save changes. */
const timingValues = ({ conversationId: _key, ...t }: ConversationTiming) => snakeCased(t);

const toBreach = ({ id: _id, ...row }: Selectable<HelpdeskSlaBreachesTable>): SlaBreach => camelCased(row);

export function timingStore(base: Kysely<Database>) {
  const db = helpdeskDb(base);
  return {
    async get(conversationId: string): Promise<ConversationTiming | undefined> {
      if (!isUuid(conversationId)) return undefined;
      const row = await db.selectFrom('helpdesk_conversation_timing').selectAll().where('conversation_id', '=', conversationId).executeTakeFirst();
      return row && toTiming(row);
    },
    async lock(fresh: ConversationTiming): Promise<ConversationTiming> {
      // Created on first use; a concurrent creator makes this wait for its commit, then do nothing.
      await db
        .insertInto('helpdesk_conversation_timing')
        .values(snakeCased(fresh))
        .onConflict((oc) => oc.column('conversation_id').doNothing())
        .execute();
      const row = await db.selectFrom('helpdesk_conversation_timing').selectAll().where('conversation_id', '=', fresh.conversationId).forUpdate().executeTakeFirstOrThrow();
      return toTiming(row);
    },
    async save(t: ConversationTiming): Promise<void> {
      await db.updateTable('helpdesk_conversation_timing').set(timingValues(t)).where('conversation_id', '=', t.conversationId).execute();
    },
  };
}

export function breachStore(base: Kysely<Database>) {
  const db = helpdeskDb(base);
  return {
    async insert(b: SlaBreach): Promise<boolean> {
      const row = await db
        .insertInto('helpdesk_sla_breaches')
        .values(snakeCased(b))
        .onConflict((oc) => oc.columns(['conversation_id', 'target', 'due_at']).doNothing())
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },
    async list(conversationId: string): Promise<SlaBreach[]> {
      const rows = await db.selectFrom('helpdesk_sla_breaches').selectAll().where('conversation_id', '=', conversationId).orderBy('due_at').orderBy('target').execute();
      return rows.map(toBreach);
    },
  };
}

/**
 * A round's deadline job, queued with the round (the outbox) to start at its due time. The job id
 * comes from the conversation, the target and the due time: the same round queued twice is one job.
 */
export function slaDeadlines(outbox: Outbox, clock: Clock): SlaTrackingStores['deadlines'] {
  return {
    async schedule(job, dueAt) {
      const seconds = Math.max(0, (dueAt.getTime() - clock.now().getTime()) / 1000);
      await outbox.enqueue(SLA_DEADLINE_QUEUE, job, { dedupeKey: `${job.conversationId}:${job.target}:${job.dueAt}`, startAfterSeconds: seconds });
    },
  };
}

/** Replies that count for SLAs: public, outgoing, by a person or a bot (the helpdesk's own have neither). */
const replies = (db: ReturnType<typeof helpdeskDb>, conversationId: string) =>
  db
    .selectFrom('helpdesk_messages')
    .where('conversation_id', '=', conversationId)
    .where('direction', '=', 'outgoing')
    .where('private', '=', false)
    .where((eb) => eb.or([eb('sender_user_id', 'is not', null), eb('sender_agent_bot_id', 'is not', null)]));

const DUE_COLUMNS = [
  ['first_response', 'first_response_due_at'],
  ['next_response', 'next_response_due_at'],
  ['resolution', 'resolution_due_at'],
] as const;

const earliest = (row: { at: Date | string | null } | undefined) => (row?.at == null ? null : new Date(row.at));

export function slaTrackingStores(base: Kysely<Database>, ctx: PluginContext): SlaTrackingStores {
  const db = helpdeskDb(base);
  return {
    async conversation(workspaceId, id) {
      if (!isUuid(id)) return undefined;
      const row = await db
        .selectFrom('helpdesk_conversations')
        .select(['id', 'workspace_id', 'inbox_id', 'status', 'created_at'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && { id: row.id, workspaceId: row.workspace_id, inboxId: row.inbox_id, status: row.status, createdAt: row.created_at };
    },
    timing: timingStore(base),
    messages: {
      firstReplyAt: async (id) => earliest(await replies(db, id).select(sql<Date | null>`min(created_at)`.as('at')).executeTakeFirst()),
      lastReplyAt: async (id) => earliest(await replies(db, id).select(sql<Date | null>`max(created_at)`.as('at')).executeTakeFirst()),
      firstReplyFrom: async (id, from) => earliest(await replies(db, id).where('created_at', '>=', from).select(sql<Date | null>`min(created_at)`.as('at')).executeTakeFirst()),
      async firstIncomingAfter(id, after) {
        let query = db.selectFrom('helpdesk_messages').where('conversation_id', '=', id).where('direction', '=', 'incoming');
        if (after !== null) query = query.where('created_at', '>', after);
        return earliest(await query.select(sql<Date | null>`min(created_at)`.as('at')).executeTakeFirst());
      },
    },
    policies: slaPolicyStore(base),
    calendar: (inboxId) => inboxCalendar(base, inboxId),
    breaches: breachStore(base),
    async overdueRounds(now, limit) {
      const found: SlaDeadlineJob[] = [];
      for (const [target, column] of DUE_COLUMNS) {
        if (found.length >= limit) break;
        const rows = await db
          .selectFrom('helpdesk_conversation_timing as t')
          .select(['t.workspace_id', 't.conversation_id', `t.${column} as due_at`])
          .where(`t.${column}`, '<=', now)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('helpdesk_sla_breaches as b')
                  .select('b.id')
                  .whereRef('b.conversation_id', '=', 't.conversation_id')
                  .where('b.target', '=', target)
                  .whereRef('b.due_at', '=', `t.${column}`),
              ),
            ),
          )
          .orderBy(`t.${column}`)
          .limit(limit - found.length)
          .execute();
        for (const row of rows) found.push({ workspaceId: row.workspace_id, conversationId: row.conversation_id, target, dueAt: new Date(row.due_at!).toISOString() });
      }
      return found;
    },
    deadlines: slaDeadlines(ctx.queue.outbox(base), ctx.clock),
    events: helpdeskEventLog(base, ctx),
  };
}

/** Tracking a conversation on a helpdesk event, with when the event was recorded. */
export function timingEventStores(base: Kysely<Database>, ctx: PluginContext) {
  return {
    tracking: slaTrackingStores(base, ctx),
    /** When the event was recorded (in the transaction of the change, on the service's clock). */
    async recordedAt(eventId: string): Promise<Date | undefined> {
      const row = await base.selectFrom('events').select('created_at').where('id', '=', eventId).executeTakeFirst();
      return row ? new Date(row.created_at) : undefined;
    },
  };
}

/** The ports of the conversation SLA routes (and the tracker, for putting a policy on a conversation). */
export function conversationSlaStores(base: Kysely<Database>, ctx: PluginContext): ConversationSlaStores & { tracking: SlaTrackingStores } {
  return {
    conversations: conversationStores(base, ctx),
    timing: timingStore(base),
    breaches: breachStore(base),
    policies: slaPolicyStore(base),
    tracking: slaTrackingStores(base, ctx),
  };
}
