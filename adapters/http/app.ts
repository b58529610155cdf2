import { Elysia, t } from 'elysia';
import { swagger } from '@elysiajs/swagger';
import type { Plugin } from '../../plugins/plugin.ts';
import type { AppContext } from './context.ts';
import { errorResponse } from './errors.ts';
import { badRequest } from '../../core/shared/errors.ts';
import { SCOPE_DESCRIPTIONS, SCOPES } from '../../core/oauth/scopes.ts';
import { accountRoutes } from './routes/accounts.ts';
import { apiTokenRoutes } from './routes/api-tokens.ts';
import { memberRoutes } from './routes/members.ts';
import { connectionRoutes } from './routes/connections.ts';
import { messageRoutes } from './routes/messages.ts';
import { templateRoutes } from './routes/templates.ts';
import { mediaRoutes } from './routes/media.ts';
import { sandboxRoutes } from './routes/sandbox.ts';
import { providerCallbackRoutes } from './routes/provider-callbacks.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { signInPages } from './pages/sign-in.ts';
import { passwordSetupPages } from './pages/password-setup.ts';
import { invitationPages } from './pages/invitation.ts';
import { MCP_PATH, mcpRoutes } from '../mcp/routes.ts';
import { requestAuthenticator } from './auth.ts';
import { oauthRoutes } from './routes/oauth.ts';
import { oauthDiscoveryRoutes } from './routes/oauth-discovery.ts';
import { oauthAppRoutes } from './routes/oauth-apps.ts';

/**
 * The HTTP surface: base features always, then the routes of each enabled plugin. A
 * disabled plugin's routes are simply not mounted, so they answer 404.
 */
export function createHttpApp(ctx: AppContext, plugins: Plugin[]) {
  let app = new Elysia()
    .onError({ as: 'global' }, ({ code, error }) => errorResponse(code, error))
    // `parse: 'none'` (raw uploads, signed callbacks) alongside the global hook below: Elysia
    // then looks `none` up as a named parser; this one claims the body without reading it.
    .parser('none', () => null)
    // Routes that read their own bodies come before the JSON hook below: MCP (JSON-RPC), the
    // OAuth endpoints (errors in the OAuth shape), signed provider callbacks (raw bytes).
    .use(mcpRoutes(ctx, plugins, requestAuthenticator(ctx, MCP_PATH)))
    .use(oauthRoutes(ctx))
    .use(providerCallbackRoutes(ctx))
    // Every JSON body of this API is an object; `1`, `[]` or `"x"` must not pass as an empty one.
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      if (!contentType?.startsWith('application/json')) return;
      // Read a copy: routes that check a signature over the raw bytes (provider callbacks,
      // `parse: 'none'`) still read the original body after this hook.
      const text = await request.clone().text();
      if (text.trim() === '') return {};
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw badRequest('Request body is not valid JSON');
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest(['body must be a JSON object']);
      return body;
    })
    .use(
      swagger({
        path: '/docs',
        specPath: '/docs/json',
        exclude: ['/docs', '/docs/json'],
        // Paths with a dot would pass for static files; the discovery documents under /.well-known are API.
        excludeStaticFile: false,
        documentation: {
          info: {
            title: 'Switchboard API',
            version: '3.0.0',
            description:
              'Self-hosted messaging, campaigns and helpdesk. Authenticate with the `apikey` header (select another workspace with `X-Account-Id`) or an OAuth 2.1 bearer token.',
          },
          components: {
            securitySchemes: {
              apikey: { type: 'apiKey', in: 'header', name: 'apikey' },
              oauth2: {
                type: 'oauth2',
                description: 'OAuth 2.1 bearer token (spec 5.3): PKCE S256, scopes narrow the approver’s role. Discovery: /.well-known/oauth-authorization-server',
                flows: {
                  authorizationCode: {
                    authorizationUrl: '/v3/oauth/authorize',
                    tokenUrl: '/v3/oauth/token',
                    refreshUrl: '/v3/oauth/token',
                    scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_DESCRIPTIONS[s]])),
                  },
                },
              },
            },
          },
        },
      }),
    )
    .get('/healthz', () => ({ status: 'ok' as const }), {
      response: { 200: t.Object({ status: t.Literal('ok') }) },
      detail: { tags: ['Service'], summary: 'Liveness' },
    })
    .use(accountRoutes(ctx))
    .use(apiTokenRoutes(ctx))
    .use(memberRoutes(ctx))
    .use(connectionRoutes(ctx))
    .use(messageRoutes(ctx))
    .use(templateRoutes(ctx))
    .use(mediaRoutes(ctx))
    .use(sandboxRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(oauthDiscoveryRoutes(ctx, plugins))
    .use(oauthAppRoutes(ctx))
    .use(signInPages(ctx))
    .use(passwordSetupPages(ctx))
    .use(invitationPages(ctx));

  for (const plugin of plugins) {
    if (plugin.routes) app = app.use(plugin.routes(ctx)) as unknown as typeof app;
  }
  return app;
}
