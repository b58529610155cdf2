import { sql, type Kysely } from 'kysely';
import { workspaceRecord, createdAt, timestamps, belongsTo, refersTo } from '../../kernel/table-columns.ts';
import { indexBy } from '../../kernel/table-indexes.ts';

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
    .$call(workspaceRecord)
    .$call(belongsTo('conversation_id', 'helpdesk_conversations'))
    .$call(belongsTo('message_id', 'helpdesk_messages'))
    .$call(belongsTo('mentioned_user_id', 'users'))
    .$call(refersTo('actor_user_id', 'users'))
    .$call(createdAt)
    .addUniqueConstraint('helpdesk_mentions_message_user_key', ['message_id', 'mentioned_user_id'])
    .execute();
  await indexBy(db, 'helpdesk_mentions', 'conversation');

  await db.schema
    .createTable('helpdesk_notifications')
    .$call(workspaceRecord)
    .$call(belongsTo('user_id', 'users'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('mention', 'assigned', 'new_message_in_assigned')`))
    .addColumn('primary_actor_type', 'text', (c) => c.notNull())
    .addColumn('primary_actor_id', 'uuid', (c) => c.notNull())
    .addColumn('secondary_actor_type', 'text')
    .addColumn('secondary_actor_id', 'uuid')
    .$call(belongsTo('conversation_id', 'helpdesk_conversations'))
    .addColumn('message_id', 'uuid', (c) => c.references('helpdesk_messages.id').onDelete('cascade'))
    .addColumn('source_event_id', 'uuid', (c) => c.notNull())
    .addColumn('read_at', 'timestamptz')
    .$call(createdAt)
    .addUniqueConstraint('helpdesk_notifications_event_user_key', ['user_id', 'source_event_id'])
    .execute();
  await db.schema.createIndex('helpdesk_notifications_list_idx').on('helpdesk_notifications').columns(['workspace_id', 'user_id', 'created_at']).execute();
  await db.schema
    .createIndex('helpdesk_notifications_unread_idx')
    .on('helpdesk_notifications')
    .columns(['workspace_id', 'user_id'])
    .where(sql.ref('read_at'), 'is', null)
    .execute();
  await indexBy(db, 'helpdesk_notifications', 'conversation');
  await indexBy(db, 'helpdesk_notifications', 'message');

  await db.schema
    .createTable('helpdesk_canned_responses')
    .$call(workspaceRecord)
    .addColumn('short_code', 'text', (c) => c.notNull())
    .addColumn('short_code_key', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .$call(refersTo('created_by', 'users'))
    .$call(timestamps)
    .addUniqueConstraint('helpdesk_canned_responses_short_code_key', ['workspace_id', 'short_code_key'])
    .execute();

  await db.schema
    .createTable('helpdesk_macros')
    .$call(workspaceRecord)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull().check(sql`visibility in ('personal', 'workspace')`))
    .$call(refersTo('created_by', 'users'))
    .addColumn('actions', 'jsonb', (c) => c.notNull())
    .$call(timestamps)
    .execute();
  await db.schema.createIndex('helpdesk_macros_workspace_idx').on('helpdesk_macros').columns(['workspace_id', 'visibility', 'created_by']).execute();
}
