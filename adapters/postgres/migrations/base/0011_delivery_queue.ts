import { sql, type Kysely } from 'kysely';

/**
 * Deliveries are their own queue (issue 4, 2,000 deliveries/s): a worker claims due deliveries
 * in batches (`FOR UPDATE SKIP LOCKED`) instead of fetching one pg-boss job per delivery.
 *
 * - `next_attempt_at`: when the delivery is due (domain time); null once settled.
 * - `claim_id`, `claimed_until`: the worker holding it and until when (wall-clock time); a
 *   worker that dies stops renewing and the delivery is due again once the lease has passed.
 * - `attempts_made`: attempts over the delivery's whole life, so a batch of attempts can be
 *   numbered (1, 2, 3, then 4… after a manual redelivery) without reading the history.
 *
 * Events to fan out wait in `webhook_fanout`, written with the event; a worker takes them in
 * batches. Deliveries and fan-outs queued as pg-boss jobs before this migration are still
 * handled by those jobs' handlers.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_deliveries
    add column next_attempt_at timestamptz,
    add column claim_id uuid,
    add column claimed_until timestamptz,
    add column attempts_made integer not null default 0`.execute(db);
  await sql`update webhook_deliveries d set attempts_made = (select count(*) from webhook_attempts a where a.delivery_id = d.id)`.execute(db);
  await sql`update webhook_deliveries set next_attempt_at = updated_at where state in ('PENDING', 'RETRYING')`.execute(db);
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where next_attempt_at is not null`.execute(db);

  await db.schema
    .createTable('webhook_fanout')
    .addColumn('event_id', 'uuid', (c) => c.primaryKey())
    .execute();
}
