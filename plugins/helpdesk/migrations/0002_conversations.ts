import { sql, type Kysely } from 'kysely';
import { uuidKey, ownedByWorkspace, workspaceRecord, createdAt, timestamps, belongsTo, refersTo, onePer, jsonObject } from '../../kernel/table-columns.ts';
import { indexInOrder } from '../../kernel/table-indexes.ts';

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
    .$call(onePer('workspace_id', 'workspaces'))
    .addColumn('last_display_id', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('helpdesk_conversations')
    .$call(workspaceRecord)
    .addColumn('display_id', 'integer', (c) => c.notNull())
    .$call(belongsTo('inbox_id', 'helpdesk_inboxes'))
    .$call(belongsTo('contact_id', 'helpdesk_contacts'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('OPEN', 'PENDING', 'SNOOZED', 'RESOLVED')`))
    .addColumn('snoozed_until', 'timestamptz')
    .addColumn('priority', 'text', (c) => c.check(sql`priority in ('LOW', 'MEDIUM', 'HIGH', 'URGENT')`))
    .$call(refersTo('assignee_user_id', 'users'))
    // Teams come later: no foreign key yet.
    .addColumn('team_id', 'uuid')
    .addColumn('labels', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .$call(jsonObject('custom_attributes'))
    .addColumn('ai_agent_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('assignee_last_seen_at', 'timestamptz')
    .addColumn('last_activity_at', 'timestamptz', (c) => c.notNull())
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('helpdesk_conversations_display_key').on('helpdesk_conversations').columns(['workspace_id', 'display_id']).unique().execute();
  await indexInOrder(db, 'helpdesk_conversations', 'workspace', 'last_activity_at');
  await db.schema.createIndex('helpdesk_conversations_contact_idx').on('helpdesk_conversations').columns(['inbox_id', 'contact_id', 'created_at']).execute();

  await db.schema
    .createTable('helpdesk_messages')
    .$call(uuidKey)
    .$call(belongsTo('conversation_id', 'helpdesk_conversations'))
    .$call(ownedByWorkspace)
    .addColumn('direction', 'text', (c) => c.notNull().check(sql`direction in ('incoming', 'outgoing', 'activity')`))
    .addColumn('private', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('content', 'text', (c) => c.notNull())
    .$call(refersTo('sender_user_id', 'users'))
    .$call(refersTo('chat_message_id', 'messages'))
    .addColumn('status', 'text', (c) => c.check(sql`status in ('PENDING', 'SENT', 'DELIVERED', 'READ', 'FAILED')`))
    .addColumn('external_error', 'text')
    .$call(createdAt)
    .execute();
  // Oldest first by (created_at, id); ids are UUID v7, so id order is creation order.
  await db.schema.createIndex('helpdesk_messages_conversation_idx').on('helpdesk_messages').columns(['conversation_id', 'id']).execute();
  // One helpdesk message per connection message: replaying an incoming event stores nothing new.
  await db.schema.createIndex('helpdesk_messages_chat_message_key').on('helpdesk_messages').column('chat_message_id').unique().execute();
}
