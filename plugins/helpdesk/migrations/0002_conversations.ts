import { sql, type Kysely } from 'kysely';

/**
 * Helpdesk conversations and their messages (spec 2.11, 2.12, 3.1, 3.2, 4.6). Frozen: never
 * import app code here.
 *
 * `displayId` is sequential per workspace: `helpdesk_display_counters` holds one row per workspace,
 * bumped (`insert … on conflict do update … returning`) in the transaction that inserts the
 * conversation, so two conversations created at once get two numbers and a rolled-back one gives
 * its number back. `(workspace_id, display_id)` is unique as a last guard.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_display_counters')
    .addColumn('workspace_id', 'uuid', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('last_display_id', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('helpdesk_conversations')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('display_id', 'integer', (c) => c.notNull())
    .addColumn('inbox_id', 'uuid', (c) => c.notNull().references('helpdesk_inboxes.id').onDelete('cascade'))
    .addColumn('contact_id', 'uuid', (c) => c.notNull().references('helpdesk_contacts.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('OPEN', 'PENDING', 'SNOOZED', 'RESOLVED')`))
    .addColumn('snoozed_until', 'timestamptz')
    .addColumn('priority', 'text', (c) => c.check(sql`priority in ('LOW', 'MEDIUM', 'HIGH', 'URGENT')`))
    .addColumn('assignee_user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    // Teams come later: no foreign key yet.
    .addColumn('team_id', 'uuid')
    .addColumn('labels', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn('custom_attributes', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('ai_agent_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('assignee_last_seen_at', 'timestamptz')
    .addColumn('last_activity_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('helpdesk_conversations_display_key').on('helpdesk_conversations').columns(['workspace_id', 'display_id']).unique().execute();
  await db.schema.createIndex('helpdesk_conversations_workspace_idx').on('helpdesk_conversations').columns(['workspace_id', 'last_activity_at']).execute();
  await db.schema.createIndex('helpdesk_conversations_contact_idx').on('helpdesk_conversations').columns(['inbox_id', 'contact_id', 'created_at']).execute();

  await db.schema
    .createTable('helpdesk_messages')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('conversation_id', 'uuid', (c) => c.notNull().references('helpdesk_conversations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('direction', 'text', (c) => c.notNull().check(sql`direction in ('incoming', 'outgoing', 'activity')`))
    .addColumn('private', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('sender_user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('chat_message_id', 'uuid', (c) => c.references('messages.id').onDelete('set null'))
    .addColumn('status', 'text', (c) => c.check(sql`status in ('PENDING', 'SENT', 'DELIVERED', 'READ', 'FAILED')`))
    .addColumn('external_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // Oldest first by (created_at, id); ids are UUID v7, so id order is creation order.
  await db.schema.createIndex('helpdesk_messages_conversation_idx').on('helpdesk_messages').columns(['conversation_id', 'id']).execute();
  // One helpdesk message per connection message: replaying an incoming event stores nothing new.
  await db.schema.createIndex('helpdesk_messages_chat_message_key').on('helpdesk_messages').column('chat_message_id').unique().execute();
}
