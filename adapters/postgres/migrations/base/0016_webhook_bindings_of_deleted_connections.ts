import { sql, type Kysely } from 'kysely';

/**
 * Deleting a connection used to leave its id in webhooks' `connections` (issue 20 §9); a PATCH
 * sending that list back was then refused. Deletion now unbinds in the same transaction; this
 * removes the ids already left behind.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update webhooks
    set connections = array(select c from unnest(webhooks.connections) as c where exists (select 1 from connections where connections.id = c))
    where exists (select 1 from unnest(webhooks.connections) as c where not exists (select 1 from connections where connections.id = c))
  `.execute(db);
}
