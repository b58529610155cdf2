import { sql, type Kysely } from 'kysely';
import { workspaceRecord, timestamps } from '../../kernel/table-columns.ts';
import { createMemberTable } from './member-tables.ts';

/**
 * Helpdesk teams of agents (spec 2.11 `teamId`), their members, the conversations' foreign key to
 * them, and the index the snooze expiry sweep reads. Frozen: never import app code here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_teams')
    .$call(workspaceRecord)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .$call(timestamps)
    .execute();
  // A name is unique in its workspace regardless of case ("Billing" and "billing" collide: 409).
  await sql`create unique index helpdesk_teams_name_key on helpdesk_teams (workspace_id, lower(name))`.execute(db);

  await createMemberTable(db, 'helpdesk_team_members', { column: 'team_id', table: 'helpdesk_teams' });

  // No team could be set before this migration; a stray id would block the foreign key.
  await sql`update helpdesk_conversations set team_id = null where team_id is not null and team_id not in (select id from helpdesk_teams)`.execute(db);
  await db.schema
    .alterTable('helpdesk_conversations')
    .addForeignKeyConstraint('helpdesk_conversations_team_fkey', ['team_id'], 'helpdesk_teams', ['id'], (fk) => fk.onDelete('set null'))
    .execute();
  await db.schema.createIndex('helpdesk_conversations_team_idx').on('helpdesk_conversations').columns(['team_id']).where(sql.ref('team_id'), 'is not', null).execute();

  // The snooze expiry sweep looks for snoozes that are due: only SNOOZED rows are indexed.
  await db.schema.createIndex('helpdesk_conversations_snoozed_idx').on('helpdesk_conversations').column('snoozed_until').where(sql.ref('status'), '=', 'SNOOZED').execute();
}
