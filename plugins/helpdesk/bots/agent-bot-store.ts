import type { Kysely, Selectable } from 'kysely';
import type { SecretBox } from '../../kernel/security.ts';
import { camelCased, containing, findInWorkspace, isUniqueViolation, pageOfLoadedRows, type Database } from '../../kernel/storage.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import { conflict } from '../../../core/shared/errors.ts';
import type { AgentBot, AgentBotStore } from '../../../core/helpdesk/bots/agent-bots.ts';
import type { AgentBotTurnStore, BotConversationStore } from '../../../core/helpdesk/bots/agent-bot-conversations.ts';
import { lockConversation } from '../conversations/store.ts';
import { helpdeskDb, type HelpdeskAgentBotsTable } from '../tables.ts';
import { withLinkedInboxes } from '../inboxes/linked-inbox-store.ts';

/** Agent bots with the inboxes they serve; the signing secret is sealed at rest, the access token only hashed. */
export function agentBotStore(base: Kysely<Database>, { box }: { box: SecretBox }): AgentBotStore {
  const db = helpdeskDb(base);
  const toBot = (row: Selectable<HelpdeskAgentBotsTable>, inboxIds: string[]): AgentBot => ({ ...camelCased(row), inboxIds, signingSecret: box.open(row.signing_secret) });
  const withInboxes = (rows: Selectable<HelpdeskAgentBotsTable>[]): Promise<AgentBot[]> =>
    withLinkedInboxes(
      rows,
      (ids) => db.selectFrom('helpdesk_agent_bot_inboxes').select(['agent_bot_id as owner', 'inbox_id']).where('agent_bot_id', 'in', ids).orderBy('bound_at').orderBy('inbox_id').execute(),
      toBot,
    );
  const one = async (row: Selectable<HelpdeskAgentBotsTable> | undefined) => (row ? (await withInboxes([row]))[0] : undefined);
  const bind = async (bot: AgentBot, inboxIds: string[], at: Date) => {
    if (inboxIds.length === 0) return;
    try {
      await db
        .insertInto('helpdesk_agent_bot_inboxes')
        .values(inboxIds.map((inboxId) => ({ inbox_id: inboxId, agent_bot_id: bot.id, workspace_id: bot.workspaceId, bound_at: at })))
        .execute();
    } catch (error) {
      // Another bot claimed one of the inboxes since the check (the primary key decided).
      if (isUniqueViolation(error, 'helpdesk_agent_bot_inboxes_pkey')) throw conflict('An inbox has at most one agent bot: another bot was just bound to one of these inboxes');
      throw error;
    }
  };
  const columns = (bot: AgentBot) => ({
    name: bot.name,
    description: bot.description,
    webhook_url: bot.webhookUrl,
    access_token_hash: bot.accessTokenHash,
    access_token_last4: bot.accessTokenLast4,
    signing_secret: box.seal(bot.signingSecret),
    updated_at: bot.updatedAt,
  });

  return {
    async insert(bot, at) {
      await db.insertInto('helpdesk_agent_bots').values({ id: bot.id, workspace_id: bot.workspaceId, created_at: bot.createdAt, ...columns(bot) }).execute();
      await bind(bot, bot.inboxIds, at);
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_agent_bots', workspaceId, id, one);
    },
    async find(id) {
      if (!isUuid(id)) return undefined;
      return one(await db.selectFrom('helpdesk_agent_bots').selectAll().where('id', '=', id).executeTakeFirst());
    },
    async findByTokenHash(hash) {
      return one(await db.selectFrom('helpdesk_agent_bots').selectAll().where('access_token_hash', '=', hash).executeTakeFirst());
    },
    async list(workspaceId, request) {
      let query = db.selectFrom('helpdesk_agent_bots').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('name', 'ilike', containing(request.search));
      return pageOfLoadedRows(query, request, (q) => q.selectAll().orderBy('created_at').orderBy('id'), withInboxes);
    },
    async update(bot, at) {
      await db.updateTable('helpdesk_agent_bots').set(columns(bot)).where('id', '=', bot.id).execute();
      const kept = await db.selectFrom('helpdesk_agent_bot_inboxes').select('inbox_id').where('agent_bot_id', '=', bot.id).execute();
      const keptIds = kept.map((k) => k.inbox_id);
      const dropped = keptIds.filter((id) => !bot.inboxIds.includes(id));
      if (dropped.length > 0) await db.deleteFrom('helpdesk_agent_bot_inboxes').where('agent_bot_id', '=', bot.id).where('inbox_id', 'in', dropped).execute();
      await bind(
        bot,
        bot.inboxIds.filter((id) => !keptIds.includes(id)),
        at,
      );
    },
    async delete(id) {
      // Bindings cascade; the trigger of migrations/0011 drops the delivery history.
      await db.deleteFrom('helpdesk_agent_bots').where('id', '=', id).execute();
    },
    async servingInbox(inboxId) {
      if (!isUuid(inboxId)) return undefined;
      const binding = await db.selectFrom('helpdesk_agent_bot_inboxes').select(['agent_bot_id', 'bound_at']).where('inbox_id', '=', inboxId).executeTakeFirst();
      if (!binding) return undefined;
      const bot = await this.find(binding.agent_bot_id);
      return bot && { bot, boundAt: binding.bound_at };
    },
    async servedByOthers(inboxIds, exceptBotId) {
      if (inboxIds.length === 0) return [];
      let query = db.selectFrom('helpdesk_agent_bot_inboxes').select(['inbox_id', 'agent_bot_id']).where('inbox_id', 'in', inboxIds);
      if (exceptBotId !== null) query = query.where('agent_bot_id', '<>', exceptBotId);
      const rows = await query.orderBy('inbox_id').execute();
      return rows.map((r) => ({ inboxId: r.inbox_id, agentBotId: r.agent_bot_id }));
    },
  };
}

/** The bot's turn on each conversation, once (the primary key is the guard). */
export function agentBotTurnStore(base: Kysely<Database>): AgentBotTurnStore {
  const db = helpdeskDb(base);
  return {
    async passed(conversationId) {
      if (!isUuid(conversationId)) return false;
      return (await db.selectFrom('helpdesk_agent_bot_turns').select('conversation_id').where('conversation_id', '=', conversationId).executeTakeFirst()) !== undefined;
    },
    async record(turn) {
      const row = await db
        .insertInto('helpdesk_agent_bot_turns')
        .values({ conversation_id: turn.conversationId, workspace_id: turn.workspaceId, agent_bot_id: turn.agentBotId, taken: turn.taken, decided_at: turn.at })
        .onConflict((oc) => oc.column('conversation_id').doNothing())
        .returning('conversation_id')
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

/** Conversations as the bot use cases lock and find them. */
export function botConversationStore(base: Kysely<Database>): BotConversationStore {
  const db = helpdeskDb(base);
  return {
    lock: (conversationId) => lockConversation(base, conversationId),
    async heldBy(agentBotId, inboxIds) {
      if (inboxIds !== null && inboxIds.length === 0) return [];
      let query = db.selectFrom('helpdesk_conversations').select('id').where('assignee_agent_bot_id', '=', agentBotId);
      if (inboxIds !== null) query = query.where('inbox_id', 'in', inboxIds);
      return (await query.orderBy('id').execute()).map((r) => r.id);
    },
  };
}

/** Who holds a conversation now: a bot's id, null for nobody or a person, undefined when it is gone. */
export async function conversationHolder(base: Kysely<Database>, conversationId: string): Promise<string | null | undefined> {
  if (!isUuid(conversationId)) return undefined;
  const row = await helpdeskDb(base).selectFrom('helpdesk_conversations').select('assignee_agent_bot_id').where('id', '=', conversationId).executeTakeFirst();
  return row ? row.assignee_agent_bot_id : undefined;
}
