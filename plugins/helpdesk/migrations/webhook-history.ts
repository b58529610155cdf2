import { sql, type Kysely } from 'kysely';

/**
 * Deliveries name their webhook without a foreign key (one engine for every kind of webhook), so
 * a trigger deletes a webhook's delivery history with the row of `table` that is its webhook
 * (`target`: the deliveries' target kind). Frozen with the migrations that call it.
 */
export async function deliveriesGoWithTheirWebhook(db: Kysely<any>, table: string, target: string): Promise<void> {
  const trigger = sql.raw(`${table}_drop_deliveries`);
  await sql`
    create function ${trigger}() returns trigger language plpgsql as $$
    begin
      delete from webhook_deliveries where webhook_id = old.id and target = ${sql.lit(target)};
      return old;
    end $$`.execute(db);
  await sql`
    create trigger ${trigger} after delete on ${sql.raw(table)}
    for each row execute function ${trigger}()`.execute(db);
}
