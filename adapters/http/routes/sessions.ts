import { t } from 'elysia';
import {
  endOtherSessions,
  endOwnSession,
  listOwnSessions,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  signOutMemberEverywhere,
  type SessionView,
} from '../../../core/identity/sessions.ts';
import { forbidden } from '../../../core/shared/errors.ts';
import { hashSecret } from '../../../core/tokens/secret.ts';
import { baseStores } from '../../postgres/stores.ts';
import { announceAccessChange } from '../../realtime/hub.ts';
import { authenticatedRoutes } from '../route-group.ts';
import type { AppContext } from '../context.ts';
import { authErrors, iso, Timestamp, Uuid } from '../schemas.ts';
import { RoleName } from './accounts.ts';
import { sessionCookieValue } from '../web-session.ts';

const HOURS = SESSION_IDLE_MS / 3_600_000;
const DAYS = SESSION_ABSOLUTE_MS / 86_400_000;

const Session = t.Object({
  id: Uuid,
  createdAt: Timestamp,
  lastSeenAt: Timestamp,
  expiresAt: t.String({ format: 'date-time', description: `When it ends unless used again (idle expiry: ${HOURS} hours after its last use).` }),
  absoluteExpiresAt: t.String({ format: 'date-time', description: `When it ends whatever the use (${DAYS} days after sign-in).` }),
  userAgent: t.Nullable(t.String()),
  current: t.Boolean({ description: 'The session this request was made with.' }),
});

const SignedIn = t.Object({
  user: t.Object({ userId: Uuid, email: t.String(), name: t.String() }),
  workspaceId: t.String({ format: 'uuid', description: 'The workspace this request acted in (`X-Account-Id`, else the default: the oldest that is not the member\'s personal workspace, else that one).' }),
  workspaces: t.Array(t.Object({ workspaceId: Uuid, name: t.String(), roles: t.Array(RoleName) })),
  session: Session,
  csrfToken: t.String({ description: 'Send it as `X-CSRF-Token` with every write made with this session.' }),
});

const Ended = t.Object({ ended: t.Integer({ description: 'How many sessions ended.' }) });

/**
 * Sign-in sessions through the API (issue 22): a browser app signed in at `/signin` starts from
 * `GET /v3/session`; every member lists and ends their own sessions; an Owner signs a member of
 * their workspace out everywhere. Closed to OAuth clients (route-scopes.ts): a person's sign-in
 * sessions are theirs, not an app's to read or end.
 */
export function sessionRoutes(ctx: AppContext) {
  return authenticatedRoutes(ctx, { name: 'routes.sessions', prefix: '/v3', tags: ['Sessions'] })
    .get(
      '/session',
      async ({ actor, request }) => {
        const value = sessionCookieValue(ctx, request);
        if (!actor.sessionId || !value) throw forbidden('GET /v3/session answers a sign-in session (the /signin cookie) only; this request has none');
        const stores = baseStores(ctx.db);
        const [session, user, workspaces] = await Promise.all([
          stores.sessions.findByHash(hashSecret(value)),
          stores.identity.getUser(actor.userId),
          stores.identity.listWorkspacesOf(actor.userId),
        ]);
        if (!session || !user) throw forbidden('The sign-in session has ended');
        return {
          user: { userId: user.id, email: user.email, name: user.name },
          workspaceId: actor.workspaceId,
          workspaces: workspaces.map((w) => ({ workspaceId: w.id, name: w.name, roles: w.roles })),
          session: present({ ...session, current: true }),
          csrfToken: session.csrf,
        };
      },
      {
        response: { ...authErrors, 200: SignedIn },
        detail: {
          summary: 'Who is signed in (sign-in session only)',
          description:
            'For a page of this service signed in at `/signin`: the member, their workspaces with their roles, and the CSRF token every write made with the session carries as `X-CSRF-Token`. ' +
            'An API key or OAuth token has no session: 403.',
        },
      },
    )
    .get('/sessions', async ({ actor }) => ({ data: (await listOwnSessions(baseStores(ctx.db).sessions, ctx, actor)).map(present) }), {
      response: { ...authErrors, 200: t.Object({ data: t.Array(Session) }) },
      detail: { summary: 'List your sign-in sessions', description: 'Your live sessions, most recently used first; `current` marks the one of this request. Every member may.' },
    })
    .delete(
      '/sessions',
      async ({ actor }) => {
        const ended = await endOtherSessions(baseStores(ctx.db).sessions, actor);
        await announceAccessChange(ctx.realtime, { userId: actor.userId });
        return { ended };
      },
      {
        response: { ...authErrors, 200: Ended },
        detail: {
          summary: 'End your other sign-in sessions',
          description: 'Every session of yours but the one of this request (with an API key: all of them) ends at once, websockets opened with them included.',
        },
      },
    )
    .delete(
      '/sessions/:id',
      async ({ actor, params }) => {
        await endOwnSession(baseStores(ctx.db).sessions, actor, params.id);
        await announceAccessChange(ctx.realtime, { userId: actor.userId });
        return { id: params.id, ended: true as const };
      },
      {
        params: t.Object({ id: Uuid }),
        response: { ...authErrors, 200: t.Object({ id: Uuid, ended: t.Literal(true) }) },
        detail: { summary: 'End one of your sign-in sessions', description: 'The current one included (that signs this browser out). Another person\'s session is 404.' },
      },
    )
    .delete(
      '/members/:userId/sessions',
      async ({ actor, params }) => {
        const ended = await signOutMemberEverywhere(baseStores(ctx.db), actor, params.userId);
        await announceAccessChange(ctx.realtime, { userId: params.userId });
        return { ended };
      },
      {
        params: t.Object({ userId: Uuid }),
        response: { ...authErrors, 200: Ended },
        detail: {
          summary: 'Sign a member out everywhere (Owner)',
          description:
            'Every sign-in session of the member ends at once, in every workspace they use it in, websockets opened with them included. Owners only; a person who is not a member of this workspace is 404. ' +
            'Their API keys are not touched (see `/v3/api-tokens`).',
        },
      },
    );
}

function present(s: SessionView) {
  return {
    id: s.id,
    createdAt: iso(s.createdAt),
    lastSeenAt: iso(s.lastSeenAt),
    expiresAt: iso(s.expiresAt),
    absoluteExpiresAt: iso(s.absoluteExpiresAt),
    userAgent: s.userAgent,
    current: s.current,
  };
}
