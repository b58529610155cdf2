import { sql, type Kysely } from 'kysely';
import { ownedByWorkspace, belongsTo, onePer } from '../../kernel/table-columns.ts';

/**
 * Automatic assignment (core/helpdesk/assignment/auto-assignment.ts, round-robin.ts). Frozen: never import
 * app code here.
 *
 * - `helpdesk_assignment_settings`: the per-inbox switch (no row: on). Its row is also the lock
 *   assignments of one inbox take turns on (created on first use, `select … for update`).
 * - `helpdesk_assignment_rotations`: per pool (the inbox, or the inbox and a team) the member
 *   assigned last by the rotation; the next turn is the first online member after them.
 * - `helpdesk_assignment_decisions`: what was decided for each conversation (latest decision),
 *   so a replayed `conversation.created` changes nothing and an unassigned conversation says why.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('helpdesk_assignment_settings')
    .$call(onePer('inbox_id', 'helpdesk_inboxes'))
    .$call(ownedByWorkspace)
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    // Null while the switch was never set (the row exists only as the lock).
    .addColumn('updated_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('helpdesk_assignment_rotations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .$call(ownedByWorkspace)
    .$call(belongsTo('inbox_id', 'helpdesk_inboxes'))
    .addColumn('team_id', 'uuid', (c) => c.references('helpdesk_teams.id').onDelete('cascade'))
    // Kept when the member leaves: the position on the circle still says whose turn is next.
    .addColumn('last_user_id', 'uuid')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // One rotation per pool: the inbox's own (no team) and one per team.
  await sql`create unique index helpdesk_assignment_rotations_inbox_key on helpdesk_assignment_rotations (inbox_id) where team_id is null`.execute(db);
  await sql`create unique index helpdesk_assignment_rotations_team_key on helpdesk_assignment_rotations (inbox_id, team_id) where team_id is not null`.execute(db);

  await db.schema
    .createTable('helpdesk_assignment_decisions')
    .$call(onePer('conversation_id', 'helpdesk_conversations'))
    .$call(ownedByWorkspace)
    .addColumn('inbox_id', 'uuid', (c) => c.notNull())
    .addColumn('team_id', 'uuid')
    // arrival: decided when the conversation was created; handoff: handed to humans later.
    .addColumn('trigger', 'text', (c) => c.notNull().check(sql`"trigger" in ('arrival', 'handoff')`))
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('assignee_user_id', 'uuid')
    .addColumn('decided_at', 'timestamptz', (c) => c.notNull())
    .execute();
}
