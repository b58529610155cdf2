import type { Kysely } from 'kysely';
import { timestamps } from '../../kernel/table-columns.ts';

/**
 * The Flow encryption key of each business phone number (issue 9 item 4). Frozen: never import
 * app code here.
 *
 * Keyed by the platform's phone number id, not by connection: the key belongs to the number and
 * survives deleting the connection (spec 4.3), so `workspace_id` and `connection_id` (the last
 * connection that provisioned it, whose webhook answers) carry no foreign key. The private key
 * and the app secret are sealed with the service's secret box. `endpoint_id` is the opaque id
 * in the `dataExchangeUrl`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('flow_encryption_keys')
    .addColumn('phone_number_id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'uuid', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull())
    .addColumn('connection_id', 'uuid', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('app_secret', 'text', (c) => c.notNull())
    .addColumn('registered_at', 'timestamptz')
    .$call(timestamps)
    .execute();
}
