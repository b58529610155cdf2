import { sql, type Kysely } from 'kysely';

/**
 * One delivery engine for every kind of webhook (issue 6: helpdesk webhooks retry "on the same
 * delivery engine as connection webhooks"): a delivery names its target kind, and its webhook
 * id is no longer tied to the connection `webhooks` table by a foreign key (helpdesk webhooks
 * live in the plugin's table). The stores delete a webhook's deliveries with it; a workspace's
 * deliveries go with the workspace.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_deliveries add column target text not null default 'connection'`.execute(db);
  await sql`alter table webhook_deliveries drop constraint webhook_deliveries_webhook_id_fkey`.execute(db);
  await sql`alter table webhook_deliveries add constraint webhook_deliveries_workspace_fkey foreign key (workspace_id) references workspaces(id) on delete cascade`.execute(db);
}
