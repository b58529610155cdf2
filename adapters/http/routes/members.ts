import { errorField } from '../../logging/logger.ts';
import { t } from 'elysia';
import { changeMemberRoles, listMembers, removeMember } from '../../../core/identity/members.ts';
import { INVITATION_DAYS, inviteMember, listInvitations, revokeInvitation, type Invitation } from '../../../core/identity/invitations.ts';
import { invitationMail } from '../../../core/identity/invitation-mail.ts';
import { issuePasswordReset } from '../../../core/identity/password-reset.ts';
import { PASSWORD_RESET_MINUTES } from '../../../core/identity/passwords.ts';
import type { Member } from '../../../core/identity/identity.ts';
import { DomainError } from '../../../core/shared/errors.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { baseStores } from '../../postgres/stores.ts';
import { announceAccessChange } from '../../realtime/hub.ts';
import { authenticatedRoutes } from '../route-group.ts';
import type { AppContext } from '../context.ts';
import { authErrors, iso, PageOf, PageQuery, presentPage, StandardError, Timestamp, Uuid } from '../schemas.ts';
import { RoleName } from './accounts.ts';

const MemberView = t.Object({
  userId: Uuid,
  email: t.String(),
  name: t.String(),
  roles: t.Array(RoleName),
  joinedAt: Timestamp,
});

const InvitationView = t.Object({
  invitationId: Uuid,
  email: t.String({ description: 'Normalized (trimmed, lower case).' }),
  roles: t.Array(RoleName),
  status: t.Union([t.Literal('PENDING'), t.Literal('ACCEPTED'), t.Literal('DECLINED'), t.Literal('REVOKED'), t.Literal('EXPIRED')]),
  deliveredBy: t.Union([t.Literal('mail'), t.Literal('link')], {
    description: '`mail`: sent to the address through `SMTP_URL`. `link`: no mail is configured; the inviter passes `invitationUrl` on.',
  }),
  expiresAt: Timestamp,
});

const NewInvitationView = t.Composite([
  InvitationView,
  t.Object({
    invitationUrl: t.Optional(
      t.String({
        format: 'uri',
        description: `Only when no \`SMTP_URL\` is set, in this answer only: \`{PUBLIC_URL}/invitations/accept?token=…\`, for the inviter to pass on. It lets its holder accept or decline this one invitation (valid ${INVITATION_DAYS} days); joining with an existing account also takes that account's password.`,
      }),
    ),
  }),
]);

const InvitationListItem = t.Composite([
  InvitationView,
  t.Object({ invitedBy: t.Union([Uuid, t.Null()]), inviterName: t.Union([t.String(), t.Null()]), createdAt: Timestamp }),
]);

const Roles = t.Array(RoleName, { minItems: 1, error: 'must list at least one of OWNER, ADMIN, MANAGER, AGENT' });

/**
 * Members of the current workspace (not shown in the spec; designed here). Everyone reads;
 * Owners, Admins and Managers invite, change and remove members below their own role. People
 * join only by accepting an invitation (core/identity/invitations.ts, pages/invitation.ts).
 */
export function memberRoutes(ctx: AppContext) {
  return authenticatedRoutes(ctx, { name: 'routes.members', prefix: '/v3/members', tags: ['Members'], role: 'members' })
    .get(
      '',
      async ({ actor, query }) => presentPage(await listMembers(baseStores(ctx.db), actor, pageRequest(query)), present),
      { query: PageQuery, response: { ...authErrors, 200: PageOf(MemberView) }, detail: { summary: 'List members; `s` searches name and email' } },
    )
    .post(
      '',
      async ({ actor, body, set }) => {
        const deliveredBy = ctx.mailer ? ('mail' as const) : ('link' as const);
        const { invitation, token, workspaceName, inviterName } = await ctx.db.transaction().execute(async (trx) => {
          const stores = baseStores(trx);
          const made = await inviteMember(stores, ctx, actor, { email: body.email, roles: body.roles, deliveredBy });
          const workspace = await stores.identity.getWorkspace(actor.workspaceId);
          const inviter = await stores.identity.getUser(actor.userId);
          return { ...made, workspaceName: workspace?.name ?? '', inviterName: inviter?.name ?? null };
        });
        const url = `${ctx.config.publicUrl}/invitations/accept?token=${encodeURIComponent(token)}`;
        if (ctx.mailer) {
          try {
            await ctx.mailer.send(invitationMail({ to: invitation.email, workspaceName, inviterName, roles: invitation.roles, url, expiresAt: invitation.expiresAt }));
          } catch (error) {
            // Not delivered: withdraw it, so no pending invitation waits for a mail that never left.
            await ctx.db.transaction().execute((trx) => revokeInvitation(baseStores(trx), ctx, actor, invitation.id)).catch(() => {});
            ctx.log.error({ workspaceId: actor.workspaceId, error: errorField(error) }, 'invitation mail not sent');
            throw new DomainError('upstream_failed', 'The invitation mail could not be sent (SMTP_URL); nothing was sent. Try again later.');
          }
        }
        set.status = 201;
        return { ...presentInvitation(invitation), ...(!ctx.mailer && { invitationUrl: url }) };
      },
      {
        body: t.Object({
          email: t.String({ format: 'email', error: 'must be an email address' }),
          roles: Roles,
        }),
        response: { ...authErrors, 201: NewInvitationView, 409: StandardError, 502: StandardError },
        detail: {
          summary: 'Invite a person by email to join this workspace',
          description:
            `Creates a PENDING invitation (valid ${INVITATION_DAYS} days) with roles below your own; the person joins only when they accept it. ` +
            'With `SMTP_URL` set the link is mailed to the address and not shown here; otherwise this answer carries `invitationUrl` for you to pass on. ' +
            'The answer is the same whether or not the email has an account. A new invitation to an email with one pending replaces it; an email that is already a member of this workspace is 409. ' +
            'Accepting with an existing account takes its password as well as the link; a mailed link that comes back marks the address verified. ' +
            'A mailed link to an address whose account nobody has verified may instead take that account over with a new password: every sign-in session, API token and OAuth grant of the account ends, ' +
            'it leaves the workspaces it joined through a link passed on by an inviter, and it gets a new personal workspace.',
        },
      },
    )
    .get(
      '/invitations',
      async ({ actor, query }) => {
        const found = await listInvitations(baseStores(ctx.db), ctx, actor, pageRequest(query));
        return {
          ...found,
          data: found.data.map((i) => ({ ...presentInvitation(i), invitedBy: i.invitedBy, inviterName: i.inviterName, createdAt: iso(i.createdAt) })),
        };
      },
      {
        query: PageQuery,
        response: { ...authErrors, 200: PageOf(InvitationListItem) },
        detail: { summary: 'List pending invitations', description: 'Invitations not yet accepted, declined, revoked or expired, oldest first. `s` is ignored.' },
      },
    )
    .delete(
      '/invitations/:id',
      async ({ actor, params }) => presentInvitation(await ctx.db.transaction().execute((trx) => revokeInvitation(baseStores(trx), ctx, actor, params.id))),
      {
        params: t.Object({ id: Uuid }),
        response: { ...authErrors, 200: InvitationView, 409: StandardError },
        detail: {
          summary: 'Revoke a pending invitation',
          description: 'Its link stops working at once. Only invitations for roles below your own; one that is no longer pending is 409.',
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
    .post(
      '/:userId/password-reset',
      async ({ actor, params, set }) => {
        const link = await ctx.db
          .transaction()
          .execute((trx) => issuePasswordReset(baseStores(trx), { clock: ctx.clock, signingKey: ctx.keys.signing, publicUrl: ctx.config.publicUrl }, actor, params.userId));
        // Spec 7.1: a POST answers 201; the link is a new thing made for the member.
        set.status = 201;
        return { url: link.url, expiresAt: iso(link.expiresAt) };
      },
      {
        params: t.Object({ userId: Uuid }),
        body: t.Optional(t.Object({}, { description: 'No fields' })),
        response: {
          ...authErrors,
          201: t.Object({
            url: t.String({
              format: 'uri',
              description: '`{PUBLIC_URL}/account/password?token=…`: the page where the member sets a new password. Pass it on to them; whoever holds it can set the password.',
            }),
            expiresAt: Timestamp,
          }),
        },
        detail: {
          summary: 'Issue a one-time password reset link for a member',
          description:
            `Owners and Admins only; an Admin cannot reset an Owner's password, and nobody can reset the password of a person who also belongs to another shared workspace they do not administer (403). ` +
            `The link works once, for ${PASSWORD_RESET_MINUTES} minutes: setting a password with it (or in any other way) kills it. Setting the new password ends every sign-in session of the person. ` +
            'Meant for installations without mail (`SMTP_URL`); with mail, people reset their own password from “Forgot password?” on the sign-in page.',
        },
      },
    )
    .delete(
      '/:userId',
      async ({ actor, params }) => {
        await ctx.db.transaction().execute((trx) => removeMember(baseStores(trx), actor, params.userId));
        // Their live sockets end now, not at their next heartbeat: those of this workspace, and those
        // opened with a sign-in session (every session of theirs ended with the removal).
        await announceAccessChange(ctx.realtime, { userId: params.userId });
        return { userId: params.userId, removed: true as const };
      },
      {
        params: t.Object({ userId: Uuid }),
        response: { ...authErrors, 200: t.Object({ userId: Uuid, removed: t.Literal(true) }) },
        detail: { summary: 'Remove a member below you; their API tokens for this workspace stop working and every sign-in session of theirs ends' },
      },
    );
}

function present(m: Member) {
  return { userId: m.userId, email: m.email, name: m.name, roles: m.roles, joinedAt: iso(m.createdAt) };
}

function presentInvitation(i: Invitation) {
  return { invitationId: i.id, email: i.email, roles: i.roles, status: i.status, deliveredBy: i.deliveredBy, expiresAt: iso(i.expiresAt) };
}
