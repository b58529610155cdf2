import { Elysia, t } from 'elysia';
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
import { pageRequest } from '../../../core/shared/pagination.ts';
import { authentication } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, iso, PageOf, PageQuery, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
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

  return new Elysia({ name: 'plugins.helpdesk.teams', prefix: '/v3/helpdesk/teams', detail: { tags: ['Helpdesk'] } })
    .use(authentication(ctx))
    .guard({ auth: true }, (app) =>
      app
        .get(
          '',
          async ({ actor, query }) => {
            const found = await listTeams(ctx.storage.read(teamStores), actor, pageRequest(query));
            return { ...found, data: found.data.map(present) };
          },
          { query: PageQuery, response: { ...authErrors, 200: PageOf(TeamView) }, detail: { summary: 'Teams of the workspace, by name (any member); `s` searches the name' } },
        )
        .post(
          '',
          async ({ actor, body, set }) => {
            const team = await ctx.storage.transaction(teamStores, (s) => createTeam(s, deps, actor, body));
            set.status = 201;
            return present(team);
          },
          {
            role: ['helpdesk.configure', 'write'],
            body: t.Object({ name: Name, description: t.Optional(Description) }),
            response: { ...authErrors, 201: TeamView, 409: StandardError },
            detail: { summary: 'Create a team (Owner, Admin, Manager; PRO plan); 409 when the name is taken' },
          },
        )
        .get('/:id', async ({ actor, params }) => present(await getTeam(ctx.storage.read(teamStores), actor, params.id)), {
          params: Id,
          response: { ...authErrors, ...NotFound, 200: TeamView },
          detail: { summary: 'One team with its members' },
        })
        .patch('/:id', async ({ actor, params, body }) => present(await ctx.storage.transaction(teamStores, (s) => updateTeam(s, deps, actor, params.id, body))), {
          role: ['helpdesk.configure', 'write'],
          params: Id,
          body: t.Object({ name: t.Optional(Name), description: t.Optional(Description) }),
          response: { ...authErrors, ...NotFound, 200: TeamView, 409: StandardError },
          detail: { summary: 'Rename a team or change its description (Owner, Admin, Manager; PRO plan); fields left out keep their value' },
        })
        .delete(
          '/:id',
          async ({ actor, params }) => {
            await ctx.storage.transaction(teamStores, (s) => deleteTeam(s, deps, actor, params.id));
            return { id: params.id, deleted: true as const };
          },
          {
            role: ['helpdesk.configure', 'write'],
            params: Id,
            response: { ...authErrors, ...NotFound, 200: t.Object({ id: t.String(), deleted: t.Literal(true) }) },
            detail: {
              summary: 'Delete a team (Owner, Admin, Manager; PRO plan)',
              description: 'Its conversations keep their assignee and lose the team; each records helpdesk.conversation.assignee_changed with toTeamId null.',
            },
          },
        )
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
