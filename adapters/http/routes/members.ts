import { Elysia, t } from 'elysia';
import { addMember, changeMemberRoles, listMembers, removeMember } from '../../../core/identity/members.ts';
import type { Member } from '../../../core/identity/identity.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { baseStores } from '../../postgres/stores.ts';
import { announceAccessChange } from '../../realtime/hub.ts';
import { authentication } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { authErrors, iso, PageOf, PageQuery, StandardError, Timestamp, Uuid } from '../schemas.ts';
import { RoleName } from './accounts.ts';

const MemberView = t.Object({
  userId: Uuid,
  email: t.String(),
  name: t.String(),
  roles: t.Array(RoleName),
  joinedAt: Timestamp,
});

const AddedMemberView = t.Composite([
  MemberView,
  t.Object({
    passwordSetupUrl: t.Optional(
      t.String({
        format: 'uri',
        description:
          'Only when the person is new to the service: `{PUBLIC_URL}/account/password?token=…`, where they set their password and sign in. Valid 7 days; dies once a password is set. Shown once.',
      }),
    ),
  }),
]);

const Roles = t.Array(RoleName, { minItems: 1, error: 'must list at least one of OWNER, ADMIN, MANAGER, AGENT' });

/**
 * Members of the current workspace (not shown in the spec; designed here). Everyone reads;
 * Owners, Admins and Managers add, change and remove members below their own role.
 */
export function memberRoutes(ctx: AppContext) {
  return new Elysia({ name: 'routes.members', prefix: '/v3/members', detail: { tags: ['Members'] } })
    .use(authentication(ctx))
    .guard({ auth: true }, (app) =>
      app
        .get(
          '',
          async ({ actor, query }) => {
            const found = await listMembers(baseStores(ctx.db), actor, pageRequest(query));
            return { ...found, data: found.data.map(present) };
          },
          { query: PageQuery, response: { ...authErrors, 200: PageOf(MemberView) }, detail: { summary: 'List members; `s` searches name and email' } },
        )
        .post(
          '',
          async ({ actor, body, set }) => {
            const deps = { ...ctx, signingKey: ctx.keys.signing, publicUrl: ctx.config.publicUrl };
            const member = await ctx.db.transaction().execute((trx) => addMember(baseStores(trx), deps, actor, body));
            set.status = 201;
            return { ...present(member), ...(member.passwordSetupUrl && { passwordSetupUrl: member.passwordSetupUrl }) };
          },
          {
            body: t.Object({
              email: t.String({ format: 'email', error: 'must be an email address' }),
              name: t.Optional(t.String({ maxLength: 120 })),
              roles: Roles,
            }),
            response: { ...authErrors, 201: AddedMemberView, 409: StandardError },
            detail: {
              summary: 'Add (invite) a person by email; someone new to the service gets an account',
              description:
                'Someone new to the service gets an account, a personal workspace and, in this answer only, `passwordSetupUrl`: a link to hand to them, valid 7 days and usable once, where they set a password and sign in. A person who already exists gets no link.',
            },
          },
        )
        .patch(
          '/:userId',
          async ({ actor, params, body }) => {
            const member = await changeMemberRoles(baseStores(ctx.db), actor, params.userId, body.roles);
            // Their sockets move between rooms now (an Agent made Manager sees every inbox, and back).
            await announceAccessChange(ctx.realtime, { workspaceId: actor.workspaceId, userId: params.userId });
            return present(member);
          },
          {
            params: t.Object({ userId: Uuid }),
            body: t.Object({ roles: Roles }),
            response: { ...authErrors, 200: MemberView },
            detail: { summary: 'Change the roles of a member below you' },
          },
        )
        .delete(
          '/:userId',
          async ({ actor, params }) => {
            await ctx.db.transaction().execute((trx) => removeMember(baseStores(trx), actor, params.userId));
            // Their live sockets in this workspace end now, not at their next heartbeat.
            await announceAccessChange(ctx.realtime, { workspaceId: actor.workspaceId, userId: params.userId });
            return { userId: params.userId, removed: true as const };
          },
          {
            params: t.Object({ userId: Uuid }),
            response: { ...authErrors, 200: t.Object({ userId: Uuid, removed: t.Literal(true) }) },
            detail: { summary: 'Remove a member below you; their API tokens for this workspace stop working' },
          },
        ),
    );
}

function present(m: Member) {
  return { userId: m.userId, email: m.email, name: m.name, roles: m.roles, joinedAt: iso(m.createdAt) };
}
