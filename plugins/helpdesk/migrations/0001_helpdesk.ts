import { sql, type Kysely } from 'kysely';
import { workspaceRecord, timestamps, refersTo, jsonObject } from '../../kernel/table-columns.ts';
import { indexInOrder } from '../../kernel/table-indexes.ts';
import { createMemberTable } from './member-tables.ts';

/** Helpdesk inboxes, their members, and contacts (spec 2.10, 4.6). Frozen: never import app code here. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_inboxes')
    .$call(workspaceRecord)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('channel_type', 'text', (c) => c.notNull().check(sql`channel_type in ('CONNECTION', 'API')`))
    .$call(refersTo('connection_id', 'connections'))
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('webhook_url', 'text')
    .addColumn('hmac_mandatory', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('inbound_secret', 'text')
    .$call(timestamps)
    .execute();
  await indexInOrder(db, 'helpdesk_inboxes', 'workspace');
  // One inbox per connection in a workspace (NULLs, API inboxes, do not collide).
  await db.schema.createIndex('helpdesk_inboxes_connection_key').on('helpdesk_inboxes').columns(['workspace_id', 'connection_id']).unique().execute();

  await createMemberTable(db, 'helpdesk_inbox_members', { column: 'inbox_id', table: 'helpdesk_inboxes' });

  await db.schema
    .createTable('helpdesk_contacts')
    .$call(workspaceRecord)
    .addColumn('name', 'text')
    .addColumn('phone', 'text')
    .addColumn('email', 'text')
    .$call(jsonObject('custom_attributes'))
    .$call(timestamps)
    .execute();
  await indexInOrder(db, 'helpdesk_contacts', 'workspace');
  await db.schema.createIndex('helpdesk_contacts_phone_key').on('helpdesk_contacts').columns(['workspace_id', 'phone']).unique().execute();
}
