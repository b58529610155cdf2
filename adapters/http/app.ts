import { Elysia, t } from 'elysia';
import { swagger } from '@elysiajs/swagger';
import type { Plugin } from '../../plugins/plugin.ts';
import type { AppContext } from './context.ts';
import { errorResponse } from './errors.ts';
import { badRequest } from '../../core/shared/errors.ts';
import { accountRoutes } from './routes/accounts.ts';
import { apiTokenRoutes } from './routes/api-tokens.ts';
import { memberRoutes } from './routes/members.ts';
import { connectionRoutes } from './routes/connections.ts';
import { messageRoutes } from './routes/messages.ts';
import { mediaRoutes } from './routes/media.ts';
import { sandboxRoutes } from './routes/sandbox.ts';
import { PROVIDER_CALLBACK_PREFIX, providerCallbackRoutes } from './routes/provider-callbacks.ts';
import { webhookRoutes } from './routes/webhooks.ts';

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
    // Every JSON body of this API is an object; `1`, `[]` or `"x"` must not pass as an empty one.
    .onParse({ as: 'global' }, async ({ request, contentType, path }) => {
      if (!contentType?.startsWith('application/json')) return;
      // Signed provider callbacks read their raw bytes: the signature is checked before the body.
      if (path.startsWith(PROVIDER_CALLBACK_PREFIX)) return;
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
        documentation: {
          info: {
            title: 'Switchboard API',
            version: '3.0.0',
            description: 'Self-hosted messaging, campaigns and helpdesk. Authenticate with the `apikey` header; select another workspace with `X-Account-Id`.',
          },
          components: { securitySchemes: { apikey: { type: 'apiKey', in: 'header', name: 'apikey' } } },
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
    .use(mediaRoutes(ctx))
    .use(sandboxRoutes(ctx))
    .use(providerCallbackRoutes(ctx))
    .use(webhookRoutes(ctx));

  for (const plugin of plugins) {
    if (plugin.routes) app = app.use(plugin.routes(ctx)) as unknown as typeof app;
  }
  return app;
}
