import { Elysia, t } from 'elysia';
import { swagger } from '@elysiajs/swagger';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import type { AppContext } from './context.ts';
import { errorResponse, oauthResponse, standard } from './errors.ts';
import { badRequest } from '../../core/shared/errors.ts';
import { assertCleanText, bodyLimits, declaredLength, readBytes, readForm, readText, type BodyLimits } from './body.ts';
import { parseJsonText, urlProblem } from './input-guard.ts';
import { OAuthError } from '../../core/oauth/errors.ts';
import { SCOPE_DESCRIPTIONS, SCOPES } from '../../core/oauth/scopes.ts';
import { accountRoutes } from './routes/accounts.ts';
import { apiTokenRoutes } from './routes/api-tokens.ts';
import { cookieName } from './pages/cookies.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { memberRoutes } from './routes/members.ts';
import { connectionRoutes } from './routes/connections.ts';
import { messageRoutes } from './routes/messages.ts';
import { templateRoutes } from './routes/templates.ts';
import { mediaRoutes } from './routes/media.ts';
import { sandboxRoutes } from './routes/sandbox.ts';
import { syncSessionRoutes, syncTokenRoutes } from './routes/sync-session.ts';
import { providerCallbackRoutes } from './routes/provider-callbacks.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { signInPages } from './pages/sign-in.ts';
import { passwordSetupPages } from './pages/password-setup.ts';
import { invitationPages } from './pages/invitation.ts';
import { firstRunPages } from './pages/first-run.ts';
import { forgotPasswordPages } from './pages/forgot-password.ts';
import { scalarScript, SCALAR_SCRIPT_PATH, SCALAR_OFFLINE } from './docs-assets.ts';
import { MCP_PATH, mcpRoutes, mcpScopes } from '../mcp/routes.ts';
import { requestAuthenticator } from './auth.ts';
import { corsHook } from './cors.ts';
import { oauthRoutes } from './routes/oauth.ts';
import { oauthDiscoveryRoutes } from './routes/oauth-discovery.ts';
import { oauthAppRoutes } from './routes/oauth-apps.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { httpMetrics } from '../metrics/http-metrics.ts';
import { answeringEarly, beginRequest, finishRequest, noteStatus, requestLogger } from './request-log.ts';
import { readinessRoute } from './readiness.ts';

/**
 * The HTTP surface: base features always, then the routes of each enabled plugin. A
 * disabled plugin's routes are simply not mounted, so they answer 404.
 */
export function createHttpApp(ctx: AppContext, plugins: Plugin[]) {
  const limits = bodyLimits(ctx.config);
  const home = homePage(plugins);
  let app = new Elysia()
    .onError({ as: 'global' }, ({ code, error, request }) => {
      const response = errorResponse(code, error, requestLogger(ctx.log, request));
      noteStatus(request, response.status);
      return response;
    })
    // Requests by route template and status, with their duration (GET /metrics).
    .use(httpMetrics(ctx.metrics))
    // The request id, on every answer, and the access line once the answer is sent.
    .onRequest(beginRequest)
    .onAfterResponse({ as: 'global' }, finishRequest(ctx))
    // CORS for browser MCP clients and the MCP endpoint's Origin check (DNS rebinding), before all else.
    .onRequest(answeringEarly(ctx, corsHook(ctx)))
    // First for every request, before routing, authentication or any body is read: a declared
    // body larger than any route reads, and a URL with NUL, lone surrogates or broken escapes.
    .onRequest(answeringEarly(ctx, ({ request }: { request: Request }) => refuseEarly(request, limits)))
    // `parse: 'none'` (raw uploads, signed callbacks) alongside the global hook below: Elysia
    // then looks `none` up as a named parser; this one claims the body without reading it.
    .parser('none', () => null)
    // Routes that read their own bodies come before the JSON hook below: MCP (JSON-RPC), the
    // OAuth endpoints (errors in the OAuth shape), signed provider callbacks (raw bytes).
    .use(mcpRoutes(ctx, plugins, requestAuthenticator(ctx, MCP_PATH, mcpScopes(plugins).join(' '))))
    .use(oauthRoutes(ctx))
    .use(providerCallbackRoutes(ctx))
    .use(syncSessionRoutes(ctx))
    // Runs before `transform` (authentication), also for `parse: 'none'` routes: every body is
    // bounded here. JSON is parsed here (refused when too deep or with NUL/lone surrogates);
    // every JSON body of this API is an object, so `1`, `[]` or `"x"` must not pass as an empty one.
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      const type = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
      // JSON is read from the request itself: a route that checks a signature over the raw
      // bytes (`parse: 'none'`) reads them again through body.ts, which keeps them. Form and
      // text bodies are read from a copy, because Elysia itself then reads the original.
      if (type === 'application/json') {
        const text = await readText(request, limits.body);
        if (text.trim() === '') return {};
        const body = parseJsonText(text);
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest(['body must be a JSON object']);
        return body;
      }
      if (type === 'application/x-www-form-urlencoded') {
        await readForm(request.clone(), limits.body);
        return;
      }
      if (type.startsWith('text/')) {
        assertCleanText(await readText(request.clone(), limits.body), 'body');
        return;
      }
      // Uploads and other bytes: a declared length was checked on arrival; a chunked body is
      // counted here so that no reader after this one (Elysia's own included) takes more.
      if (request.body && declaredLength(request) === undefined) await readBytes(request.clone(), limits.media);
    })
    .use(
      swagger({
        path: '/docs',
        specPath: '/docs/json',
        exclude: ['/docs', '/docs/json', SCALAR_SCRIPT_PATH],
        // The reference UI comes from this service (docs-assets.ts), not a CDN: /docs works offline.
        scalarCDN: SCALAR_SCRIPT_PATH,
        scalarConfig: SCALAR_OFFLINE,
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
              session: {
                type: 'apiKey',
                in: 'cookie',
                name: cookieName(ctx.config.publicUrl, 'sb_session'),
                description:
                  'The sign-in session of /signin (a browser page of this service): acts as the member like an API key, in their default workspace (the oldest that is not their personal one) or the one `X-Account-Id` names. ' +
                  'Writes need `Origin` (else `Referer`) equal to PUBLIC_URL\'s origin and `X-CSRF-Token` equal to the session\'s token (GET /v3/session); otherwise 403.',
              },
              metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, for GET /metrics on the public port' },
              syncToken: {
                type: 'http',
                scheme: 'bearer',
                description: 'Sync token (spec 5.6) from POST /v3/connections/{id}/sync-session: signed, bound to one connection, single-use, valid 10 minutes',
              },
              oauth2: {
                type: 'oauth2',
                description:
                  'OAuth 2.1 bearer token (spec 5.3): PKCE S256, scopes narrow the approver’s role. Discovery: /.well-known/oauth-authorization-server. ' +
                  'Without a valid credential: 401 with `WWW-Authenticate: Bearer realm, error="invalid_token", error_description, scope` (the scope the operation needs, when one opens it) `, resource_metadata`; ' +
                  'a token lacking the scope: 403 `error="insufficient_scope"` naming it.',
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
    .use(metricsRoutes(ctx))
    .use(readinessRoute(ctx))
    .use(accountRoutes(ctx))
    .use(apiTokenRoutes(ctx))
    .use(memberRoutes(ctx))
    .use(sessionRoutes(ctx))
    .use(connectionRoutes(ctx))
    .use(syncTokenRoutes(ctx))
    .use(messageRoutes(ctx))
    .use(templateRoutes(ctx))
    .use(mediaRoutes(ctx))
    .use(sandboxRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(oauthDiscoveryRoutes(ctx, plugins))
    .use(oauthAppRoutes(ctx))
    .use(signInPages(ctx, home))
    .use(passwordSetupPages(ctx, home))
    .use(invitationPages(ctx, home))
    .use(firstRunPages(ctx, home))
    .use(forgotPasswordPages(ctx))
    .use(scalarScript());

  for (const plugin of plugins) {
    if (plugin.routes) app = app.use(plugin.routes(ctx)) as unknown as typeof app;
  }
  return app;
}

/** Where a person lands after signing in or setting up: the first plugin page that claims it, else `/account`. */
export function homePage(plugins: readonly Plugin[]): string {
  return plugins.find((plugin) => plugin.homePage)?.homePage ?? '/account';
}

/**
 * What is refused before anything else runs: a Content-Length over the largest limit (uploads;
 * JSON routes apply the smaller one when they read) and a URL whose path or query decodes to
 * NUL, a lone surrogate or broken UTF-8 (one place for every path parameter and query value).
 */
function refuseEarly(request: Request, limits: BodyLimits): Response | undefined {
  const length = declaredLength(request);
  if (length !== undefined && length > Math.max(limits.body, limits.media)) {
    return standard(413, `The request body must be at most ${Math.max(limits.body, limits.media)} bytes`);
  }
  const problem = urlProblem(request.url);
  if (!problem) return undefined;
  // The OAuth endpoints answer in their own shape (spec 7.2, shape 3).
  if (new URL(request.url).pathname.startsWith('/v3/oauth/')) return oauthResponse(new OAuthError('invalid_request', problem));
  return standard(400, [problem]);
}
