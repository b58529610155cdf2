import { sql, type Kysely } from 'kysely';
import { workspaceRecord, belongsTo } from '../../kernel/table-columns.ts';
import { indexInOrder } from '../../kernel/table-indexes.ts';

/**
 * History syncs of inboxes (core/helpdesk/inboxes/inbox-sync.ts): one row per sync with its status,
 * cursor (the last chat done) and counts. Frozen: never import app code here.
 *
 * At most one RUNNING sync per inbox: a partial unique index is the last guard behind the
 * start's check (two starts at once: the second gets 409). `connection_id` records which
 * connection was synced; it has no foreign key so a sync outlives its connection as history.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_inbox_syncs')
    .$call(workspaceRecord)
    .$call(belongsTo('inbox_id', 'helpdesk_inboxes'))
    .addColumn('connection_id', 'uuid', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('RUNNING', 'COMPLETED', 'FAILED')`))
    .addColumn('cursor', 'text')
    .addColumn('chats_per_page', 'integer', (c) => c.notNull())
    .addColumn('contacts_total', 'integer', (c) => c.notNull())
    .addColumn('contacts_processed', 'integer', (c) => c.notNull())
    .addColumn('contacts_created', 'integer', (c) => c.notNull())
    .addColumn('conversations_total', 'integer', (c) => c.notNull())
    .addColumn('conversations_processed', 'integer', (c) => c.notNull())
    .addColumn('conversations_created', 'integer', (c) => c.notNull())
    .addColumn('messages_imported', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await indexInOrder(db, 'helpdesk_inbox_syncs', 'inbox', 'started_at');
  await db.schema
    .createIndex('helpdesk_inbox_syncs_running_key')
    .on('helpdesk_inbox_syncs')
    .column('inbox_id')
    .unique()
    .where(sql.ref('status'), '=', 'RUNNING')
    .execute();
}
