import { sql, type Kysely } from 'kysely';

/** Helpdesk inboxes, their members, and contacts (spec 2.10, 4.6). Frozen: never import app code here. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_inboxes')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('channel_type', 'text', (c) => c.notNull().check(sql`channel_type in ('CONNECTION', 'API')`))
    .addColumn('connection_id', 'uuid', (c) => c.references('connections.id').onDelete('set null'))
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('webhook_url', 'text')
    .addColumn('hmac_mandatory', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('inbound_secret', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('helpdesk_inboxes_workspace_idx').on('helpdesk_inboxes').columns(['workspace_id', 'created_at']).execute();
  // One inbox per connection in a workspace (NULLs, API inboxes, do not collide).
  await db.schema.createIndex('helpdesk_inboxes_connection_key').on('helpdesk_inboxes').columns(['workspace_id', 'connection_id']).unique().execute();

  await db.schema
    .createTable('helpdesk_inbox_members')
    .addColumn('inbox_id', 'uuid', (c) => c.notNull().references('helpdesk_inboxes.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('helpdesk_inbox_members_pkey', ['inbox_id', 'user_id'])
    .execute();
  await db.schema.createIndex('helpdesk_inbox_members_user_idx').on('helpdesk_inbox_members').column('user_id').execute();

  await db.schema
    .createTable('helpdesk_contacts')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('phone', 'text')
    .addColumn('email', 'text')
    .addColumn('custom_attributes', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('helpdesk_contacts_workspace_idx').on('helpdesk_contacts').columns(['workspace_id', 'created_at']).execute();
  await db.schema.createIndex('helpdesk_contacts_phone_key').on('helpdesk_contacts').columns(['workspace_id', 'phone']).unique().execute();
}
