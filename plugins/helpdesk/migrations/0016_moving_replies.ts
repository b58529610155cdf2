import { sql, type Kysely } from 'kysely';

/**
 * Replies whose status can still move, by their connection message: asked each time a
 * connection's delivery changes (plugins/helpdesk/subscribers.ts `hasMovingReplies`), so that a
 * connection the helpdesk never replied on queues no work. Partial: settled replies (READ,
 * FAILED), the bulk of them, are not indexed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('helpdesk_messages_moving_idx')
    .on('helpdesk_messages')
    .column('chat_message_id')
    .where(sql<boolean>`status in ('PENDING', 'SENT', 'DELIVERED') and chat_message_id is not null`)
    .execute();
}
