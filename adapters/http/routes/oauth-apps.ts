import { t } from 'elysia';
import {
  clientInformation,
  createDashboardClient,
  deleteDashboardClient,
  getDashboardClient,
  listDashboardClients,
  updateDashboardClient,
  type OAuthClient,
} from '../../../core/oauth/clients.ts';
import { deleteConsent, listConsents, type ConsentView } from '../../../core/oauth/consents.ts';
import { OAuthError } from '../../../core/oauth/errors.ts';
import { badRequest } from '../../../core/shared/errors.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { baseStores } from '../../postgres/stores.ts';
import { authenticatedRoutes } from '../route-group.ts';
import type { AppContext } from '../context.ts';
import { authErrors, iso, PageOf, PageQuery, presentPage, StandardError, Timestamp, Uuid } from '../schemas.ts';
import { oauthDeps } from './oauth.ts';
import { ClientInformation } from './oauth-docs.ts';

const ConsentItem = t.Object({
  id: Uuid,
  clientId: t.String(),
  clientName: t.String(),
  logoUri: t.Nullable(t.String()),
  verified: t.Boolean(),
  userId: Uuid,
  userEmail: t.String(),
  scopes: t.Array(t.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const ClientRecord = t.Composite(
  [
    ClientInformation,
    t.Object({
      expire_access_tokens: t.Boolean({ description: 'Off: access tokens never expire, no refresh token is issued (section 8)' }),
      required_scopes: t.Array(t.String(), { description: 'Locked on the consent screen; dropping one refuses the authorization' }),
      verified: t.Boolean({ description: 'Set by the platform operator only (CLI `verify-client`)' }),
    }),
  ],
  { description: 'An OAuth client (spec 2.5) with its dashboard settings' },
);

const ClientMetadata = t.Object(
  {
    redirect_uris: t.Array(t.String()),
    client_name: t.Optional(t.String()),
    client_uri: t.Optional(t.String()),
    logo_uri: t.Optional(t.String()),
    scope: t.Optional(t.String()),
    grant_types: t.Optional(t.Array(t.String())),
    response_types: t.Optional(t.Array(t.String())),
    token_endpoint_auth_method: t.Optional(t.String()),
    expire_access_tokens: t.Optional(t.Boolean()),
    required_scopes: t.Optional(t.Array(t.String())),
  },
  { additionalProperties: true },
);

/**
 * The workspace's side of OAuth (spec 5.3): which apps hold access (consents) and the apps the
 * workspace created itself (dashboard clients). API key only: closed to OAuth clients.
 */
export function oauthAppRoutes(ctx: AppContext) {
  const deps = oauthDeps(ctx);
  return authenticatedRoutes(ctx, { name: 'routes.oauth-apps', prefix: '/v3/oauth', tags: ['OAuth'], role: 'tokens' })
    .get(
      '/consents',
      async ({ actor, query }) => presentPage(await listConsents(baseStores(ctx.db), actor, pageRequest(query)), presentConsent),
      { query: PageQuery, response: { ...authErrors, 200: PageOf(ConsentItem) }, detail: { summary: 'Apps with access to this workspace; `s` searches the app name' } },
    )
    .delete(
      '/consents/:id',
      async ({ actor, params }) => {
        await ctx.db.transaction().execute((trx) => deleteConsent(baseStores(trx), actor, params.id));
        return { id: params.id, revoked: true as const };
      },
      {
        params: t.Object({ id: Uuid }),
        response: { ...authErrors, 200: t.Object({ id: Uuid, revoked: t.Literal(true) }), 404: StandardError },
        detail: { summary: 'Cut an app off: the consent and all its tokens die at once' },
      },
    )
    .get('/clients', async ({ actor }) => (await listDashboardClients(baseStores(ctx.db), actor)).map((c) => presentClient(c)), {
      response: { ...authErrors, 200: t.Array(ClientRecord) },
      detail: { summary: "The workspace's own OAuth apps" },
    })
    .post(
      '/clients',
      async ({ actor, body, set }) => {
        const { expire_access_tokens, required_scopes, ...metadata } = body;
        const created = await asStandard(() =>
          ctx.db.transaction().execute((trx) =>
            createDashboardClient(baseStores(trx), deps, actor, metadata, { expireAccessTokens: expire_access_tokens, requiredScopes: required_scopes }),
          ),
        );
        const client = await getDashboardClient(baseStores(ctx.db), actor, created.client_id);
        set.status = 201;
        return presentClient(client, created.client_secret);
      },
      {
        body: ClientMetadata,
        response: { ...authErrors, 201: ClientRecord },
        detail: { summary: 'Create an OAuth app (client metadata of RFC 7591 plus the dashboard settings)' },
      },
    )
    .get('/clients/:clientId', async ({ actor, params }) => presentClient(await getDashboardClient(baseStores(ctx.db), actor, params.clientId)), {
      params: t.Object({ clientId: t.String() }),
      response: { ...authErrors, 200: ClientRecord, 404: StandardError },
      detail: { summary: 'One of the workspace’s OAuth apps' },
    })
    .patch(
      '/clients/:clientId',
      async ({ actor, params, body }) =>
        presentClient(
          await asStandard(() =>
            updateDashboardClient(baseStores(ctx.db), actor, params.clientId, {
              expireAccessTokens: body.expire_access_tokens,
              requiredScopes: body.required_scopes,
              name: body.client_name,
            }),
          ),
        ),
      {
        params: t.Object({ clientId: t.String() }),
        body: t.Object({
          client_name: t.Optional(t.String({ maxLength: 255 })),
          expire_access_tokens: t.Optional(t.Boolean({ description: 'Affects only tokens issued from now on' })),
          required_scopes: t.Optional(t.Array(t.String())),
        }),
        response: { ...authErrors, 200: ClientRecord, 404: StandardError },
        detail: { summary: 'Change the name, token expiry or required scopes' },
      },
    )
    .delete(
      '/clients/:clientId',
      async ({ actor, params }) => {
        await deleteDashboardClient(baseStores(ctx.db), actor, params.clientId);
        return { client_id: params.clientId, deleted: true as const };
      },
      {
        params: t.Object({ clientId: t.String() }),
        response: { ...authErrors, 200: t.Object({ client_id: t.String(), deleted: t.Literal(true) }), 404: StandardError },
        detail: { summary: 'Delete the app with every consent and token it holds' },
      },
    );
}

/** This API's own routes answer in the standard shape, also for client metadata rules. */
async function asStandard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OAuthError) throw badRequest([`${error.code}: ${error.description}`]);
    throw error;
  }
}

function presentConsent(c: ConsentView) {
  return { ...c, createdAt: iso(c.createdAt), updatedAt: iso(c.updatedAt) };
}

function presentClient(client: OAuthClient, secret?: string) {
  return { ...clientInformation(client, secret), expire_access_tokens: client.expireAccessTokens, required_scopes: client.requiredScopes, verified: client.verified };
}
