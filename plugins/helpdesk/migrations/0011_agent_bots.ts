import { sql, type Kysely } from 'kysely';
import { ownedByWorkspace, workspaceRecord, timestamps, belongsTo, refersTo, onePer } from '../../kernel/table-columns.ts';
import { indexInOrder } from '../../kernel/table-indexes.ts';
import { deliveriesGoWithTheirWebhook } from './webhook-history.ts';

/**
 * Agent bots (core/helpdesk/bots/agent-bots.ts, agent-bot-conversations.ts). Frozen: never import app code here.
 *
 * - `helpdesk_agent_bots`: the bot; only the SHA-256 of its access token (unique: the bot API
 *   finds the bot by it), its signing secret sealed.
 * - `helpdesk_agent_bot_inboxes`: the inboxes a bot serves. The primary key on the inbox is the
 *   rule "an inbox has at most one bot" (two bots claiming one inbox at once: one wins, the other
 *   is a 409). `bound_at`: conversations created before are not the bot's.
 * - `helpdesk_agent_bot_turns`: the bot's turn on a conversation, once (primary key): taken, or
 *   declined because a person had it first. A replayed event or a later unassignment finds it and
 *   the bot does not take the conversation (back).
 * - the foreign key of `helpdesk_conversations.assignee_agent_bot_id` (column of 0009), and
 *   `helpdesk_messages.sender_agent_bot_id`: the bot that sent a message (kept null if it goes).
 * - a bot's delivery history goes with it (deliveries name their webhook without a foreign key).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_agent_bots')
    .$call(workspaceRecord)
    .addColumn('name', 'text', (c) => c.notNull().check(sql`char_length(name) between 1 and 100`))
    .addColumn('description', 'text', (c) => c.check(sql`char_length(description) <= 1000`))
    .addColumn('webhook_url', 'text', (c) => c.notNull())
    .addColumn('access_token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('access_token_last4', 'text', (c) => c.notNull())
    .addColumn('signing_secret', 'text', (c) => c.notNull())
    .$call(timestamps)
    .execute();
  await indexInOrder(db, 'helpdesk_agent_bots', 'workspace');

  await db.schema
    .createTable('helpdesk_agent_bot_inboxes')
    .$call(onePer('inbox_id', 'helpdesk_inboxes'))
    .$call(belongsTo('agent_bot_id', 'helpdesk_agent_bots'))
    .$call(ownedByWorkspace)
    .addColumn('bound_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('helpdesk_agent_bot_inboxes_bot_idx').on('helpdesk_agent_bot_inboxes').column('agent_bot_id').execute();

  await db.schema
    .createTable('helpdesk_agent_bot_turns')
    .$call(onePer('conversation_id', 'helpdesk_conversations'))
    .$call(ownedByWorkspace)
    .$call(refersTo('agent_bot_id', 'helpdesk_agent_bots'))
    .addColumn('taken', 'boolean', (c) => c.notNull())
    .addColumn('decided_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .alterTable('helpdesk_conversations')
    .addForeignKeyConstraint('helpdesk_conversations_assignee_agent_bot_fk', ['assignee_agent_bot_id'], 'helpdesk_agent_bots', ['id'], (c) => c.onDelete('set null'))
    .execute();
  await db.schema.createIndex('helpdesk_conversations_agent_bot_idx').on('helpdesk_conversations').columns(['assignee_agent_bot_id', 'inbox_id']).where('assignee_agent_bot_id', 'is not', null).execute();

  await db.schema
    .alterTable('helpdesk_messages')
    .addColumn('sender_agent_bot_id', 'uuid', (c) => c.references('helpdesk_agent_bots.id').onDelete('set null'))
    .execute();

  await deliveriesGoWithTheirWebhook(db, 'helpdesk_agent_bots', 'agent_bot');
}
