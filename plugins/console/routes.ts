import { Elysia } from 'elysia';
import type { PluginContext } from '../kernel/context.ts';
import { ASSET_PREFIX, consoleBundle, type ConsoleBundle } from './bundle.ts';

/**
 * Scripts, styles and connections from this origin only (`'self'` covers the same-origin
 * websocket); images may be data: URLs (QR codes); nothing inline, nothing framed, forms post
 * only here (sign-out).
 */
export const CONSOLE_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** `GET /` (the one document of every console page) and its hashed assets. */
export function consoleRoutes(ctx: PluginContext) {
  // Built now, while the service starts, so the first visitor does not wait for it.
  void consoleBundle().catch((error) => ctx.log.error({ error: { message: error instanceof Error ? error.message : String(error) } }, 'console bundle not built'));

  return new Elysia({ name: 'plugins.console', detail: { hide: true } })
    .get('/', async () => documentResponse(await consoleBundle()))
    .get(`${ASSET_PREFIX}:file`, async ({ params }) => {
      const asset = (await consoleBundle()).assets.get(params.file);
      if (!asset) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
      return new Response(asset.bytes, {
        headers: {
          'content-type': asset.contentType,
          // The name carries the content's hash: a new build is a new name.
          'cache-control': 'public, max-age=31536000, immutable',
          'x-content-type-options': 'nosniff',
        },
      });
    });
}

function documentResponse(bundle: ConsoleBundle): Response {
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>Switchboard</title>
<link rel="stylesheet" href="${ASSET_PREFIX}${bundle.stylesheet}">
<script type="module" src="${ASSET_PREFIX}${bundle.script}"></script>
</head>
<body>
<div id="console"><noscript>The Switchboard console needs JavaScript. The API reference is at <a href="/docs">/docs</a>.</noscript></div>
</body>
</html>`;
  return new Response(page, {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
