import { t } from 'elysia';
import {
  createTeam,
  deleteTeam,
  getTeam,
  listTeamMembers,
  listTeams,
  MAX_TEAM_DESCRIPTION,
  MAX_TEAM_NAME,
  setTeamMembers,
  updateTeam,
  type TeamDeps,
  type TeamMember,
  type TeamWithMembers,
} from '../../../core/helpdesk/teams/teams.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, iso, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { teamStores } from './store.ts';

const MemberView = t.Object({ userId: Uuid, name: t.String(), email: t.String() });
const MembersView = t.Object({ data: t.Array(MemberView) });

const TeamView = t.Object({
  id: Uuid,
  name: t.String({ description: 'Unique in the workspace, case-insensitively' }),
  description: t.Nullable(t.String()),
  members: t.Array(MemberView, { description: 'Members of the workspace in the team, by email' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Name = t.String({ description: `1 to ${MAX_TEAM_NAME} characters; unique in the workspace, case-insensitively (409)` });
const Description = t.Nullable(t.String({ description: `At most ${MAX_TEAM_DESCRIPTION} characters; null or blank clears it` }));

const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };

/** Helpdesk teams of agents (spec 2.11 `teamId`; bodies not shown in the spec, Chatwoot-like). */
export function teamRoutes(ctx: PluginContext) {
  const deps: TeamDeps = { clock: ctx.clock, ids: ctx.ids };

  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.teams',
    prefix: '/v3/helpdesk/teams',
    tags: ['Helpdesk'],
    stores: teamStores,
    view: TeamView,
    present,
    list: { run: listTeams, summary: 'Teams of the workspace, by name (any member); `s` searches the name' },
    create: {
      role: ['helpdesk.configure', 'write'],
      body: t.Object({ name: Name, description: t.Optional(Description) }),
      run: (s, actor, body) => createTeam(s, deps, actor, body),
      errors: { 409: StandardError },
      summary: 'Create a team (Owner, Admin, Manager; PRO plan); 409 when the name is taken',
    },
    get: { run: getTeam, errors: NotFound, summary: 'One team with its members' },
    update: {
      role: ['helpdesk.configure', 'write'],
      body: t.Object({ name: t.Optional(Name), description: t.Optional(Description) }),
      run: (s, actor, id, body) => updateTeam(s, deps, actor, id, body),
      errors: { ...NotFound, 409: StandardError },
      summary: 'Rename a team or change its description (Owner, Admin, Manager; PRO plan); fields left out keep their value',
    },
    remove: {
      role: ['helpdesk.configure', 'write'],
      run: (s, actor, id) => deleteTeam(s, deps, actor, id),
      errors: NotFound,
      summary: 'Delete a team (Owner, Admin, Manager; PRO plan)',
      description: 'Its conversations keep their assignee and lose the team; each records helpdesk.conversation.assignee_changed with toTeamId null.',
    },
  }).guard({ auth: true }, (app) =>
    app
      .get('/:id/members', async ({ actor, params }) => ({ data: (await listTeamMembers(ctx.storage.read(teamStores), actor, params.id)).map(presentMember) }), {
        params: Id,
        response: { ...authErrors, ...NotFound, 200: MembersView },
        detail: { summary: 'Members of the team' },
      })
      .put(
        '/:id/members',
        async ({ actor, params, body }) => ({ data: (await ctx.storage.transaction(teamStores, (s) => setTeamMembers(s, deps, actor, params.id, body.userIds))).map(presentMember) }),
        {
          role: ['helpdesk.configure', 'write'],
          params: Id,
          body: t.Object({ userIds: t.Array(t.String(), { description: 'Members of the workspace; replaces the team members', maxItems: 500 }) }),
          response: { ...authErrors, ...NotFound, 200: MembersView },
          detail: { summary: 'Replace the members of the team (Owner, Admin, Manager; PRO plan)' },
        },
      ),
  );
}

function present(team: TeamWithMembers) {
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    members: team.members.map(presentMember),
    createdAt: iso(team.createdAt),
    updatedAt: iso(team.updatedAt),
  };
}

function presentMember(m: TeamMember) {
  return { userId: m.userId, name: m.name, email: m.email };
}
