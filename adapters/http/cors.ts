import { DEFAULT_ALLOWED_ORIGINS, originAllowed, parseAllowedOrigins } from '../../core/shared/allowed-origins.ts';
import type { AppContext } from './context.ts';
import { standard } from './errors.ts';
import { MCP_PATH } from '../mcp/challenge.ts';

/**
 * CORS for browser-based MCP clients (MCP Inspector in direct mode, web agents): the discovery
 * documents, the OAuth endpoints such a client calls and the MCP endpoint answer preflights and
 * let the browser read their answers. Nothing here relies on cookies (the credentials are
 * bearer tokens, client secrets or API keys), so no `Access-Control-Allow-Credentials`: the
 * cookie-authenticated pages (sign-in, consent, decision) and the rest of `/v3` (which the sign-in
 * session cookie also authenticates) get no CORS at all and stay same-origin: another origin
 * cannot read what a member's cookie would answer.
 *
 * The MCP endpoint also checks `Origin` (Streamable HTTP transport, DNS-rebinding protection):
 * present and not in `MCP_ALLOWED_ORIGINS` → 403 before anything else runs.
 */
/** Paths open to any origin, with their methods: public documents and client-authenticated OAuth endpoints. */
const OPEN_PATHS: Record<string, string> = {
  '/.well-known/oauth-authorization-server': 'GET',
  '/.well-known/oauth-protected-resource': 'GET',
  [`/.well-known/oauth-protected-resource${MCP_PATH}`]: 'GET',
  '/v3/oauth/register': 'POST',
  '/v3/oauth/token': 'POST',
  '/v3/oauth/revoke': 'POST',
};

export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, apikey, X-Account-Id, X-Request-Id';
export const CORS_EXPOSED_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, X-Request-Id';
/** Chromium caps a preflight's cache at 2 hours. */
const MAX_AGE_SECONDS = '7200';

const defaultOrigins = parseAllowedOrigins(DEFAULT_ALLOWED_ORIGINS).origins;

/**
 * An `onRequest` hook: answers preflights (204) and refused origins (403) itself; for the other
 * requests to these paths it puts the CORS headers in `set.headers`, which Elysia merges into
 * whatever the route answers, errors included.
 */
export function corsHook(ctx: AppContext) {
  return ({ request, set }: { request: Request; set: { headers: Record<string, string | number> } }): Response | undefined => {
    const path = new URL(request.url).pathname;
    const mcp = path === MCP_PATH;
    const methods = mcp ? 'GET, POST, DELETE' : OPEN_PATHS[path];
    if (!methods) return undefined;
    const origin = request.headers.get('origin');
    if (mcp && origin !== null && !originAllowed(ctx.config.mcpAllowedOrigins ?? defaultOrigins, origin, ctx.config.publicUrl)) {
      return standard(403, 'This Origin may not call the MCP endpoint (MCP_ALLOWED_ORIGINS)');
    }
    const headers: Record<string, string> =
      origin === null ? {} : mcp ? { 'access-control-allow-origin': origin, vary: 'Origin' } : { 'access-control-allow-origin': '*' };
    if (request.method === 'OPTIONS') {
      const preflight: Record<string, string> = origin === null ? {} : { 'access-control-allow-methods': methods, 'access-control-allow-headers': CORS_ALLOWED_HEADERS, 'access-control-max-age': MAX_AGE_SECONDS };
      return new Response(null, { status: 204, headers: { ...headers, ...preflight, allow: `${methods}, OPTIONS` } });
    }
    if (origin !== null) Object.assign(set.headers, headers, { 'access-control-expose-headers': CORS_EXPOSED_HEADERS });
    return undefined;
  };
}
