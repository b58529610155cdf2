import { sql, type Kysely } from 'kysely';

/**
 * Mentions, in-app notifications, canned responses and macros (issue 7 items 6 and 8).
 * Frozen: never import app code here.
 *
 * - Mentions: one row per note and mentioned member (the unique key makes recording them
 *   idempotent); they go with their note or conversation.
 * - Notifications: one per recipient and helpdesk event (`source_event_id`, unique with the
 *   recipient: a rerun of the event's job adds none). They go with their conversation or message.
 * - Canned responses: `short_code_key` (the code lower-cased) is unique per workspace.
 * - Macros: the ordered actions as JSON; a personal macro belongs to `created_by`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_mentions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('conversation_id', 'uuid', (c) => c.notNull().references('helpdesk_conversations.id').onDelete('cascade'))
    .addColumn('message_id', 'uuid', (c) => c.notNull().references('helpdesk_messages.id').onDelete('cascade'))
    .addColumn('mentioned_user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('actor_user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('helpdesk_mentions_message_user_key', ['message_id', 'mentioned_user_id'])
    .execute();
  await db.schema.createIndex('helpdesk_mentions_conversation_idx').on('helpdesk_mentions').columns(['conversation_id']).execute();

  await db.schema
    .createTable('helpdesk_notifications')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('mention', 'assigned', 'new_message_in_assigned')`))
    .addColumn('primary_actor_type', 'text', (c) => c.notNull())
    .addColumn('primary_actor_id', 'uuid', (c) => c.notNull())
    .addColumn('secondary_actor_type', 'text')
    .addColumn('secondary_actor_id', 'uuid')
    .addColumn('conversation_id', 'uuid', (c) => c.notNull().references('helpdesk_conversations.id').onDelete('cascade'))
    .addColumn('message_id', 'uuid', (c) => c.references('helpdesk_messages.id').onDelete('cascade'))
    .addColumn('source_event_id', 'uuid', (c) => c.notNull())
    .addColumn('read_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('helpdesk_notifications_event_user_key', ['user_id', 'source_event_id'])
    .execute();
  await db.schema.createIndex('helpdesk_notifications_list_idx').on('helpdesk_notifications').columns(['workspace_id', 'user_id', 'created_at']).execute();
  await db.schema
    .createIndex('helpdesk_notifications_unread_idx')
    .on('helpdesk_notifications')
    .columns(['workspace_id', 'user_id'])
    .where(sql.ref('read_at'), 'is', null)
    .execute();
  await db.schema.createIndex('helpdesk_notifications_conversation_idx').on('helpdesk_notifications').columns(['conversation_id']).execute();
  await db.schema.createIndex('helpdesk_notifications_message_idx').on('helpdesk_notifications').columns(['message_id']).execute();

  await db.schema
    .createTable('helpdesk_canned_responses')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('short_code', 'text', (c) => c.notNull())
    .addColumn('short_code_key', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('helpdesk_canned_responses_short_code_key', ['workspace_id', 'short_code_key'])
    .execute();

  await db.schema
    .createTable('helpdesk_macros')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull().check(sql`visibility in ('personal', 'workspace')`))
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('actions', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('helpdesk_macros_workspace_idx').on('helpdesk_macros').columns(['workspace_id', 'visibility', 'created_by']).execute();
}
