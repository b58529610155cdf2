import { t } from 'elysia';
import { createApiToken, deleteApiToken, listApiTokens, renameApiToken, rotateApiToken, type ApiTokenView } from '../../../core/tokens/api-tokens.ts';
import { badRequest } from '../../../core/shared/errors.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { baseStores } from '../../postgres/stores.ts';
import { announceAccessChange } from '../../realtime/hub.ts';
import { authenticatedRoutes } from '../route-group.ts';
import type { AppContext } from '../context.ts';
import { authErrors, iso, PageOf, PageQuery, presentPage, StandardError, Timestamp, Uuid } from '../schemas.ts';

const TokenName = t.String({ minLength: 1, maxLength: 100, error: 'must be a string of 1 to 100 characters' });

const ApiToken = t.Object({
  id: Uuid,
  name: t.String(),
  prefix: t.String({ description: 'Always `sk_live`' }),
  tokenLast4: t.String(),
  createdAt: Timestamp,
  lastUsedAt: t.Nullable(Timestamp),
  token: t.Optional(t.String({ description: 'The full secret. Only in the answers of creation and rotation: store it then.' })),
});

/** API tokens (spec 2.4, 4.2): Owners and Admins only. */
export function apiTokenRoutes(ctx: AppContext) {
  return authenticatedRoutes(ctx, { name: 'routes.api-tokens', prefix: '/v3/api-tokens', tags: ['API tokens'], role: 'tokens' })
    .post(
      '',
      async ({ actor, body, set }) => {
        set.status = 201;
        return present(await createApiToken(baseStores(ctx.db).tokens, ctx, actor, body.name.trim()));
      },
      {
        body: t.Object({ name: TokenName }),
        response: { ...authErrors, 201: ApiToken },
        detail: { summary: 'Create a token; the secret is returned once' },
      },
    )
    .get(
      '',
      async ({ actor, query }) => presentPage(await listApiTokens(baseStores(ctx.db).tokens, actor, pageRequest(query)), present),
      { query: PageQuery, response: { ...authErrors, 200: PageOf(ApiToken) }, detail: { summary: 'List tokens (never their secrets)' } },
    )
    .patch(
      '/:id',
      async ({ actor, params, body }) => {
        if (!body.refreshToken && body.name === undefined) throw badRequest('Send { "refreshToken": true } to rotate, or a new name');
        let token: ApiTokenView | undefined;
        await ctx.db.transaction().execute(async (trx) => {
          const stores = baseStores(trx);
          if (body.name !== undefined) token = await renameApiToken(stores, actor, params.id, body.name.trim());
          if (body.refreshToken) token = await rotateApiToken(stores, ctx, actor, params.id);
        });
        // The old secret's sockets end now. (Which member holds the token is not asked: every
        // socket of the workspace is re-checked, which costs a lookup each.)
        if (body.refreshToken) await announceAccessChange(ctx.realtime, { workspaceId: actor.workspaceId });
        return present(token!);
      },
      {
        params: t.Object({ id: Uuid }),
        body: t.Object({ refreshToken: t.Optional(t.Boolean()), name: t.Optional(TokenName) }),
        response: { ...authErrors, 200: ApiToken },
        detail: { summary: 'Rotate (`refreshToken: true`, the old secret dies at once) or rename' },
      },
    )
    .delete(
      '/:id',
      async ({ actor, params }) => {
        await deleteApiToken(baseStores(ctx.db), actor, params.id);
        await announceAccessChange(ctx.realtime, { workspaceId: actor.workspaceId });
        return { id: params.id, revoked: true as const };
      },
      {
        params: t.Object({ id: Uuid }),
        response: { ...authErrors, 200: t.Object({ id: Uuid, revoked: t.Literal(true) }), 404: StandardError },
        detail: { summary: 'Revoke a token at once' },
      },
    );
}

function present(token: ApiTokenView) {
  return { ...token, createdAt: iso(token.createdAt), lastUsedAt: iso(token.lastUsedAt) };
}
