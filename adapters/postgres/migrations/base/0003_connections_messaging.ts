import { sql, type Kysely } from 'kysely';
import { workspaceRecord, createdAt, timestamps, createdNow, belongsTo, refersTo } from '../../../../plugins/kernel/table-columns.ts';
import { indexInOrder } from '../../../../plugins/kernel/table-indexes.ts';

/** Connections in full, chats, messages, media, upload tickets, the event log, service keys. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('connections')
    .addColumn('credentials', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('phone_number', 'text')
    .addColumn('qr', 'text')
    .addColumn('pairing_code', 'text')
    .addColumn('status_reason', 'text')
    .addColumn('routing_key', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Callbacks of official numbers are routed by phone number id; one connection per number.
  await db.schema.createIndex('connections_routing_key_idx').on('connections').column('routing_key').unique().where(sql.ref('routing_key'), 'is not', null).execute();

  await db.schema
    .createTable('chats')
    .$call(belongsTo('connection_id', 'connections'))
    .addColumn('remote_jid', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('last_message_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_contact_message_at', 'timestamptz')
    .addPrimaryKeyConstraint('chats_pkey', ['connection_id', 'remote_jid'])
    .execute();
  await db.schema.createIndex('chats_recent_idx').on('chats').columns(['connection_id', 'last_message_at']).execute();

  await db.schema
    .createTable('messages')
    .$call(workspaceRecord)
    .$call(belongsTo('connection_id', 'connections'))
    .addColumn('direction', 'text', (c) => c.notNull().check(sql`direction in ('inbound', 'outbound')`))
    .addColumn('remote_jid', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('content', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'jsonb')
    .addColumn('idempotency_key', 'text')
    .addColumn('reservation_id', 'uuid')
    .addColumn('reply_to', 'text')
    .addColumn('sent_by', 'uuid')
    .addColumn('message_timestamp', 'timestamptz', (c) => c.notNull())
    .$call(timestamps)
    .execute();
  // Dedupe: a network message is stored once per connection, however often it is delivered.
  await db.schema.createIndex('messages_external_idx').on('messages').columns(['connection_id', 'external_id']).unique().where(sql.ref('external_id'), 'is not', null).execute();
  await db.schema.createIndex('messages_idempotency_idx').on('messages').columns(['connection_id', 'idempotency_key']).unique().where(sql.ref('idempotency_key'), 'is not', null).execute();
  await db.schema.createIndex('messages_chat_idx').on('messages').columns(['connection_id', 'remote_jid', 'message_timestamp', 'id']).execute();

  await db.schema
    .createTable('media')
    .$call(workspaceRecord)
    .$call(belongsTo('connection_id', 'connections'))
    .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin in ('upload', 'received')`))
    .addColumn('driver_ref', 'text')
    .addColumn('mimetype', 'text', (c) => c.notNull())
    .addColumn('file_name', 'text')
    .addColumn('size', 'integer')
    .addColumn('bytes', 'bytea')
    .$call(createdAt)
    .execute();

  await db.schema
    .createTable('used_tickets')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('events')
    .$call(workspaceRecord)
    .$call(refersTo('connection_id', 'connections'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('remote_jid', 'text')
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .$call(createdAt)
    .execute();
  await indexInOrder(db, 'events', 'connection');

  await db.schema
    .createTable('service_keys')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('secret', 'text', (c) => c.notNull())
    .$call(createdNow)
    .execute();
}
