import { sql, type Kysely } from 'kysely';

/**
 * Plan quotas follow configuration within the month (issue 20 §10): an account records the
 * allowance it was granted, so that a changed quota moves its balance by the difference. Lowered
 * below what is already used, the balance owes credits (below 0; shown as 0, nothing more can be
 * reserved) until refunds or the next month pay it back, so the `available >= 0` check goes.
 * Rows from before have no allowance: the next start derives it from the month's usage.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('credit_accounts').addColumn('allowance', 'integer').execute();
  await sql`alter table credit_accounts drop constraint if exists credit_accounts_available_check`.execute(db);
}
