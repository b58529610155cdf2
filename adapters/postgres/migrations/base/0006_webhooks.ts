import { sql, type Kysely } from 'kysely';
import { uuidKey, workspaceRecord, timestamps, belongsTo } from '../../../../plugins/kernel/table-columns.ts';
import { indexBy, indexInOrder } from '../../../../plugins/kernel/table-indexes.ts';

/** Connection webhooks, their deliveries and attempts, and held batches (spec 2.8, 6.3, 6.4). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .$call(workspaceRecord)
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', sql`text[]`, (c) => c.notNull())
    .addColumn('connections', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('hmac_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('message_group_delay', 'integer', (c) => c.check(sql`message_group_delay between 1 and 300`))
    .addColumn('enable_simulate_typing', 'boolean', (c) => c.notNull().defaultTo(false))
    .$call(timestamps)
    .execute();
  await indexBy(db, 'webhooks', 'workspace');
  await sql`create index webhooks_connections_idx on webhooks using gin (connections)`.execute(db);

  await db.schema
    .createTable('webhook_deliveries')
    .$call(uuidKey)
    .$call(belongsTo('webhook_id', 'webhooks'))
    .addColumn('workspace_id', 'uuid', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('event_ids', sql`uuid[]`, (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('PENDING', 'RETRYING', 'SUCCEEDED', 'FAILED')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute();
  await indexInOrder(db, 'webhook_deliveries', 'webhook');

  await db.schema
    .createTable('webhook_attempts')
    .$call(belongsTo('delivery_id', 'webhook_deliveries'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_attempts_pkey', ['delivery_id', 'attempt'])
    .execute();

  await db.schema
    .createTable('webhook_batches')
    .$call(belongsTo('webhook_id', 'webhooks'))
    .addColumn('connection_id', 'uuid', (c) => c.notNull())
    .addColumn('remote_jid', 'text', (c) => c.notNull())
    .addColumn('closes_at', 'timestamptz', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('events', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_batches_pkey', ['webhook_id', 'connection_id', 'remote_jid'])
    .execute();
}
