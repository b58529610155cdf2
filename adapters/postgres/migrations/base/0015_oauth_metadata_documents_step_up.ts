import { sql, type Kysely } from 'kysely';

/**
 * Issue 20 items 11 and 15. Clients known by a Client ID Metadata Document (their `client_id` is
 * the document's URL) are stored like other clients, with the time their fetched copy goes stale.
 * A consent remembers the last scope challenge its tokens met (step-up): the next refresh of that
 * grant is refused once so the client asks the person for the wider scope.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table oauth_clients drop constraint if exists oauth_clients_registration_check`.execute(db);
  await sql`alter table oauth_clients add constraint oauth_clients_registration_check check (registration in ('DYNAMIC', 'DASHBOARD', 'METADATA_DOCUMENT'))`.execute(db);
  await db.schema.alterTable('oauth_clients').addColumn('metadata_expires_at', 'timestamptz').execute();
  await db.schema.alterTable('oauth_consents').addColumn('step_up_scopes', sql`text[]`).execute();
  await db.schema.alterTable('oauth_consents').addColumn('step_up_until', 'timestamptz').execute();
}
