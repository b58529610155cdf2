import { sql, type Kysely } from 'kysely';

/**
 * Indexes for the helpdesk reports (plugins/helpdesk/reports/store.ts), which read a range of a
 * workspace's helpdesk events (the base `events` table, rows with no connection) by type, and a
 * range of its replies. Partial: connection events and incoming messages are not indexed again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('events_helpdesk_report_idx')
    .on('events')
    .columns(['workspace_id', 'event', 'created_at'])
    .where(sql.ref('connection_id'), 'is', null)
    .execute();
  await db.schema
    .createIndex('helpdesk_messages_replies_idx')
    .on('helpdesk_messages')
    .columns(['workspace_id', 'created_at'])
    .where(sql.ref('direction'), '=', 'outgoing')
    .execute();
}
