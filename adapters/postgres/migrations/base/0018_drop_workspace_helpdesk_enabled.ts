import type { Kysely } from 'kysely';

/**
 * `workspaces.helpdesk_enabled` was never read: `helpdeskEnabled` (spec 2.3) tells whether the
 * installation loads the helpdesk plugin, for every workspace alike, so a stored per-workspace
 * flag could only drift from it (issue 21).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').dropColumn('helpdesk_enabled').execute();
}
