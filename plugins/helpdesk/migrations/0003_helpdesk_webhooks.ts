import { sql, type Kysely } from 'kysely';
import { workspaceRecord, timestamps } from '../../kernel/table-columns.ts';
import { indexInOrder } from '../../kernel/table-indexes.ts';
import { deliveriesGoWithTheirWebhook } from './webhook-history.ts';

/** Helpdesk webhooks (spec 2.9). Frozen: never import app code here. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_webhooks')
    .$call(workspaceRecord)
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('subscriptions', sql`text[]`, (c) => c.notNull())
    // An inbox's webhook goes with its inbox (widening it to the workspace would leak other inboxes' events).
    .addColumn('inbox_id', 'uuid', (c) => c.references('helpdesk_inboxes.id').onDelete('cascade'))
    .addColumn('signing_secret', 'text', (c) => c.notNull())
    .addColumn('secret_chosen', 'boolean', (c) => c.notNull())
    .$call(timestamps)
    .execute();
  await indexInOrder(db, 'helpdesk_webhooks', 'workspace');
  // Deliveries name their webhook without a foreign key (one engine for every kind of webhook):
  // a helpdesk webhook's history goes with it, however it is deleted (by hand, with its inbox).
  await deliveriesGoWithTheirWebhook(db, 'helpdesk_webhooks', 'helpdesk');
}
