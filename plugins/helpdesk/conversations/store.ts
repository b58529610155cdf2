import { sql, type Kysely, type Selectable } from 'kysely';
import { camelCased, findInWorkspace, insertedIfAbsent, lockById, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import type { Conversation, ConversationStore, ConversationStores, HelpdeskMessage, HelpdeskMessageStore } from '../../../core/helpdesk/conversations/conversations.ts';
import type { HelpdeskMessageStores } from '../../../core/helpdesk/conversations/helpdesk-messages.ts';
import { snoozeScheduler } from './snooze-jobs.ts';
import { teamStanding } from '../teams/store.ts';
import { helpdeskDb, type HelpdeskConversationsTable, type HelpdeskMessagesTable } from '../tables.ts';
import { contactStore, inboxStore, workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { labelStore } from '../labels/store.ts';
import { attachmentStore } from '../attachments/store.ts';
import type { Role } from '../../../core/identity/roles.ts';
import { apiChannelPorts } from '../api-channel/store.ts';

const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;

/** The list's columns (migrations/0016_inbox_queries.ts) are the store's, not the entity's. */
export function toConversation({ last_incoming_at: _a, waiting_since: _b, priority_rank: _c, ...row }: Selectable<HelpdeskConversationsTable>): Conversation {
  return { ...camelCased(row), displayId: Number(row.display_id), labels: row.labels ?? [], customAttributes: json(row.custom_attributes) };
}

export function toMessage(row: Selectable<HelpdeskMessagesTable>): HelpdeskMessage {
  return camelCased(row);
}

/** A conversation by id, locked until the caller's transaction ends: the bot and assignment use cases decide under it. */
export function lockConversation(base: Kysely<Database>, id: string): Promise<Conversation | undefined> {
  return lockById(helpdeskDb(base), 'helpdesk_conversations', id, toConversation);
}

export function conversationStore(base: Kysely<Database>): ConversationStore {
  const db = helpdeskDb(base);
  return {
    async insert(c) {
      // The workspace's counter row, bumped in this transaction: concurrent inserts queue on it.
      const { last_display_id } = await db
        .insertInto('helpdesk_display_counters')
        .values({ workspace_id: c.workspaceId, last_display_id: 1 })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ last_display_id: sql`helpdesk_display_counters.last_display_id + 1` }))
        .returning('last_display_id')
        .executeTakeFirstOrThrow();
      const conversation: Conversation = { ...c, displayId: Number(last_display_id) };
      await db
        .insertInto('helpdesk_conversations')
        .values({
          id: c.id,
          workspace_id: c.workspaceId,
          display_id: conversation.displayId,
          inbox_id: c.inboxId,
          contact_id: c.contactId,
          created_at: c.createdAt,
          ...changingColumns(c),
        })
        .execute();
      return conversation;
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_conversations', workspaceId, id, toConversation);
    },
    async update(c) {
      // A resolved conversation waits for nobody (whatever resolves it: a person, a macro, MCP);
      // reopened, it waits again only once the contact writes (keepListColumns).
      await db
        .updateTable('helpdesk_conversations')
        .set({ ...changingColumns(c), ...(c.status === 'RESOLVED' ? { waiting_since: null } : {}) })
        .where('id', '=', c.id)
        .execute();
    },
    async delete(id) {
      // Messages and their attachments go with it (foreign keys cascade).
      await db.deleteFrom('helpdesk_conversations').where('id', '=', id).execute();
    },
    async latestUnresolved(inboxId, contactId) {
      const row = await db
        .selectFrom('helpdesk_conversations')
        .selectAll()
        .where('inbox_id', '=', inboxId)
        .where('contact_id', '=', contactId)
        .where('status', '<>', 'RESOLVED')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .forUpdate()
        .executeTakeFirst();
      return row && toConversation(row);
    },
  };
}

export function helpdeskMessageStore(base: Kysely<Database>): HelpdeskMessageStore {
  const db = helpdeskDb(base);
  const values = (m: HelpdeskMessage) => ({
    id: m.id,
    conversation_id: m.conversationId,
    workspace_id: m.workspaceId,
    direction: m.direction,
    private: m.private,
    content: m.content,
    sender_user_id: m.senderUserId,
    sender_agent_bot_id: m.senderAgentBotId ?? null,
    chat_message_id: m.chatMessageId,
    status: m.status,
    external_error: m.externalError,
    created_at: m.createdAt,
  });
  return {
    async insert(m) {
      const inserted = await insertedIfAbsent(db.insertInto('helpdesk_messages').values(values(m)).onConflict((oc) => oc.column('chat_message_id').doNothing()));
      if (inserted) await keepListColumns(db, m);
      return inserted;
    },
    async list(conversationId, limit, before) {
      let query = db.selectFrom('helpdesk_messages').selectAll().where('conversation_id', '=', conversationId);
      if (before !== undefined) query = query.where('id', '<', before);
      // Ids are UUID v7 (time ordered): the newest `limit` before the cursor, then oldest first.
      const rows = await query.orderBy('id', 'desc').limit(limit).execute();
      return rows.reverse().map(toMessage);
    },
    async get(conversationId, id) {
      if (!isUuid(id)) return undefined;
      const row = await db.selectFrom('helpdesk_messages').selectAll().where('conversation_id', '=', conversationId).where('id', '=', id).executeTakeFirst();
      return row && toMessage(row);
    },
    async findByChatMessage(chatMessageId) {
      if (!isUuid(chatMessageId)) return undefined;
      const row = await db.selectFrom('helpdesk_messages').selectAll().where('chat_message_id', '=', chatMessageId).executeTakeFirst();
      return row && toMessage(row);
    },
    async update(m) {
      await db.updateTable('helpdesk_messages').set({ content: m.content, status: m.status, external_error: m.externalError, chat_message_id: m.chatMessageId }).where('id', '=', m.id).execute();
    },
    async delete(id) {
      await db.deleteFrom('helpdesk_messages').where('id', '=', id).execute();
    },
  };
}

/**
 * The conversation's list columns (migrations/0016_inbox_queries.ts), kept here because every
 * helpdesk message is recorded here, in the same transaction: a contact's message is the latest
 * incoming (unread after the read marker) and starts the wait if none runs; a public reply by a
 * person or a bot ends it. The helpdesk's own messages (activity lines, automatic replies with
 * no sender) and private notes leave the wait running, as the SLA timing counts it.
 */
async function keepListColumns(db: ReturnType<typeof helpdeskDb>, m: HelpdeskMessage): Promise<void> {
  if (m.direction === 'incoming') {
    await db
      .updateTable('helpdesk_conversations')
      .set((eb) => ({
        last_incoming_at: sql<Date>`greatest(${eb.ref('last_incoming_at')}, ${m.createdAt})`,
        waiting_since: eb.fn.coalesce('waiting_since', sql<Date>`${m.createdAt}`),
      }))
      .where('id', '=', m.conversationId)
      .execute();
  } else if (m.direction === 'outgoing' && !m.private && (m.senderUserId !== null || (m.senderAgentBotId ?? null) !== null)) {
    await db.updateTable('helpdesk_conversations').set({ waiting_since: null }).where('id', '=', m.conversationId).where('waiting_since', 'is not', null).execute();
  }
}

/** The ports the conversation use cases need, bound to one connection or transaction. */
export function conversationStores(base: Kysely<Database>, ctx: PluginContext): ConversationStores {
  return {
    conversations: conversationStore(base),
    messages: helpdeskMessageStore(base),
    labels: labelStore(base),
    attachments: attachmentStore(base, ctx),
    inboxes: inboxStore(base, ctx.box),
    events: helpdeskEventLog(base, ctx),
    contacts: contactStore(base),
    plans: workspacePlans(base),
    async userName(userId) {
      const row = await base.selectFrom('users').select('name').where('id', '=', userId).executeTakeFirst();
      return row?.name || undefined;
    },
    async assigneeStanding(workspaceId, inboxId, userId) {
      if (!isUuid(userId)) return undefined;
      const membership = await base.selectFrom('memberships').select('roles').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
      if (!membership) return undefined;
      const member = await helpdeskDb(base).selectFrom('helpdesk_inbox_members').select('user_id').where('inbox_id', '=', inboxId).where('user_id', '=', userId).executeTakeFirst();
      return { roles: membership.roles as Role[], inboxMember: member !== undefined };
    },
    teamStanding: (workspaceId, teamId, userId) => teamStanding(base, workspaceId, teamId, userId),
    snoozes: snoozeScheduler(ctx.queue.outbox(base), ctx.clock),
  };
}

/** The ports of the message use cases: those of conversations (a reply's status is stored, see core/helpdesk/conversations/reply-status.ts) and the API channel's. */
export function helpdeskMessageStores(base: Kysely<Database>, ctx: PluginContext): HelpdeskMessageStores {
  return { ...conversationStores(base, ctx), ...apiChannelPorts(base, ctx) };
}

/** The columns a conversation's life changes (all but its identity, inbox, contact and creation). */
function changingColumns(c: Omit<Conversation, 'displayId'>) {
  return {
    status: c.status,
    snoozed_until: c.snoozedUntil,
    priority: c.priority,
    assignee_user_id: c.assigneeUserId,
    assignee_agent_bot_id: c.assigneeAgentBotId,
    team_id: c.teamId,
    labels: c.labels,
    custom_attributes: JSON.stringify(c.customAttributes),
    ai_agent_enabled: c.aiAgentEnabled,
    assignee_last_seen_at: c.assigneeLastSeenAt,
    last_activity_at: c.lastActivityAt,
    updated_at: c.updatedAt,
  };
}
