import { sql, type Kysely, type Selectable } from 'kysely';
import { camelCased, containing, findInWorkspace, pageOfRows, snakeCased, uniqueViolationAs, type Database } from '../../kernel/storage.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { isUuid } from '../../../core/shared/ids.ts';
import { duplicateTeamName, type Team, type TeamMember, type TeamStore, type TeamStores } from '../../../core/helpdesk/teams/teams.ts';
import { conversationStore } from '../conversations/store.ts';
import { helpdeskEventLog } from '../events/event-log.ts';
import { helpdeskDb, type HelpdeskTeamsTable } from '../tables.ts';
import { inboxStores, workspacePlans } from '../inboxes/inbox-and-contact-stores.ts';
import { replaceMembers } from '../member-list-store.ts';

const toTeam = (row: Selectable<HelpdeskTeamsTable>): Team => camelCased(row);

export function teamStore(base: Kysely<Database>): TeamStore {
  const db = helpdeskDb(base);
  const rethrow = uniqueViolationAs('helpdesk_teams_name_key', duplicateTeamName);
  /**
   * Members of teams who are still members of the team's workspace: someone who left the
   * workspace keeps their row (they may come back) but is neither shown nor assigned.
   */
  const memberRows = (teamIds: string[]) =>
    db
      .selectFrom('helpdesk_team_members as tm')
      .innerJoin('helpdesk_teams as t', 't.id', 'tm.team_id')
      .innerJoin('memberships as ms', (join) => join.onRef('ms.user_id', '=', 'tm.user_id').onRef('ms.workspace_id', '=', 't.workspace_id'))
      .innerJoin('users as u', 'u.id', 'tm.user_id')
      .select(['tm.team_id', 'u.id', 'u.name', 'u.email'])
      .where('tm.team_id', 'in', teamIds)
      .orderBy('u.email')
      .execute();
  return {
    async insert(t) {
      await db
        .insertInto('helpdesk_teams')
        .values(snakeCased(t))
        .execute()
        .catch(rethrow);
    },
    async get(workspaceId, id) {
      return findInWorkspace(db, 'helpdesk_teams', workspaceId, id, toTeam);
    },
    async list(workspaceId, request) {
      let query = db.selectFrom('helpdesk_teams').where('workspace_id', '=', workspaceId);
      if (request.search) query = query.where('name', 'ilike', containing(request.search));
      return pageOfRows(query, request, (q) => q.selectAll().orderBy(sql`lower(name)`).orderBy('id'), toTeam);
    },
    async update(t) {
      await db
        .updateTable('helpdesk_teams')
        .set({ name: t.name, description: t.description, updated_at: t.updatedAt })
        .where('id', '=', t.id)
        .execute()
        .catch(rethrow);
    },
    async delete(id) {
      await db.deleteFrom('helpdesk_teams').where('id', '=', id).execute();
    },
    async members(teamId) {
      return (await memberRows([teamId])).map(toMember);
    },
    async membersOf(teamIds) {
      const found = new Map<string, TeamMember[]>();
      if (teamIds.length === 0) return found;
      for (const row of await memberRows(teamIds)) {
        const list = found.get(row.team_id) ?? [];
        list.push(toMember(row));
        found.set(row.team_id, list);
      }
      return found;
    },
    async isMember(teamId, userId) {
      if (!isUuid(userId)) return false;
      const row = await db
        .selectFrom('helpdesk_team_members as tm')
        .innerJoin('helpdesk_teams as t', 't.id', 'tm.team_id')
        .innerJoin('memberships as ms', (join) => join.onRef('ms.user_id', '=', 'tm.user_id').onRef('ms.workspace_id', '=', 't.workspace_id'))
        .select('tm.user_id')
        .where('tm.team_id', '=', teamId)
        .where('tm.user_id', '=', userId)
        .executeTakeFirst();
      return row !== undefined;
    },
    async setMembers(teamId, userIds) {
      await replaceMembers(base, 'team', teamId, userIds);
    },
    async clearFromConversations(teamId, at) {
      // Locked first: a conversation being given this team meanwhile waits (see `teamStanding`)
      // and then finds the team gone, so none is cleared silently by the foreign key.
      await db.selectFrom('helpdesk_teams').select('id').where('id', '=', teamId).forUpdate().execute();
      const conversations = conversationStore(base);
      const ids = await db.selectFrom('helpdesk_conversations').select(['id', 'workspace_id']).where('team_id', '=', teamId).forUpdate().execute();
      const changes = [];
      for (const { id, workspace_id } of ids) {
        const before = await conversations.get(workspace_id, id);
        if (!before) continue;
        const after = { ...before, teamId: null, updatedAt: at };
        await conversations.update(after);
        changes.push({ before, after });
      }
      return changes;
    },
  };
}

function toMember(row: { id: string; name: string; email: string }): TeamMember {
  return { userId: row.id, name: row.name, email: row.email };
}

/**
 * Whether the team exists in the workspace and whether `userId` (if any) is one of its members.
 * The team row is held (`for key share`) until the transaction ends: a deletion running at the
 * same time waits for the conversation change, or this finds the team already gone.
 */
export async function teamStanding(base: Kysely<Database>, workspaceId: string, teamId: string, userId: string | null): Promise<{ member: boolean } | undefined> {
  if (!isUuid(teamId)) return undefined;
  const db = helpdeskDb(base);
  const team = await db.selectFrom('helpdesk_teams').select('id').where('workspace_id', '=', workspaceId).where('id', '=', teamId).forKeyShare().executeTakeFirst();
  if (!team) return undefined;
  return { member: userId !== null && (await teamStore(base).isMember(teamId, userId)) };
}

/** The ports the team use cases need, bound to one connection or transaction. */
export function teamStores(base: Kysely<Database>, ctx: PluginContext): TeamStores {
  return {
    teams: teamStore(base),
    plans: workspacePlans(base),
    events: helpdeskEventLog(base, ctx),
    workspaceMembers: inboxStores(base, ctx).workspaceMembers,
  };
}
