import { sql, type Kysely } from 'kysely';
import { belongsTo } from '../../../../plugins/kernel/table-columns.ts';

/**
 * Receipts that arrive before the send they belong to has recorded its network id (a provider
 * may call back before its own answer to the send is processed). Applied when the id lands.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('held_receipts')
    .$call(belongsTo('connection_id', 'connections'))
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'jsonb')
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('held_receipts_message_idx').on('held_receipts').columns(['connection_id', 'external_id']).execute();
}
