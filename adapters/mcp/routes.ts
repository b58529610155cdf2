import { Elysia } from 'elysia';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Actor } from '../../core/identity/identity.ts';
import { joinScopes, satisfies } from '../../core/oauth/scopes.ts';
import { rememberScopeChallenge } from '../../core/oauth/step-up.ts';
import { baseStores } from '../postgres/stores.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import type { AppContext } from '../http/context.ts';
import { errorResponse } from '../http/errors.ts';
import { bodyLimits, readText } from '../http/body.ts';
import { jsonTextProblem } from '../http/input-guard.ts';
import { badRequest } from '../../core/shared/errors.ts';
import { insufficientScope, MCP_PATH, mcpResourceMetadataUrl } from './challenge.ts';
import { mcpScopes, mcpTools } from './registry.ts';
import { OAuthError } from '../../core/oauth/errors.ts';
import { bearerChallenge } from '../http/auth.ts';
import { createMcpServer } from './server.ts';
import type { McpToolDefinition } from './tool.ts';

export { mcpScopes, mcpTools } from './registry.ts';
export { mcpResourceMetadataUrl, MCP_PATH } from './challenge.ts';

/** Resolves who is calling; throws (a DomainError, or an answer already built) when it cannot. */
export type McpAuthenticator = (request: Request) => Promise<Actor>;

/**
 * The MCP endpoint (`/v3/mcp`, spec 1.7): Streamable HTTP, stateless. Every POST gets a new
 * server and transport, so any server process answers any request; GET (a standalone SSE
 * stream) and DELETE (ending a session) have nothing to do without sessions and answer 405.
 *
 * `authenticate` says who is calling. When the actor carries OAuth `scopes`, a `tools/call`
 * the scopes do not cover is answered 403 with a scope challenge before the transport sees it.
 *
 * The route reads its own body (`parse: 'none'`): mount it before the app's global JSON
 * `onParse` hook, which would refuse JSON-RPC batches and answer bad JSON in the REST shape.
 */
export function mcpRoutes(ctx: AppContext, plugins: Plugin[], authenticate: McpAuthenticator) {
  const tools = mcpTools(plugins);
  const scopes = mcpScopes(plugins).join(' ');
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const security: Record<string, string[]>[] = [{ apikey: [] }, { oauth2: [] }];
  const detail = { tags: ['MCP'], security };

  return new Elysia({ name: 'routes.mcp' })
    .post(MCP_PATH, ({ request }) => handlePost(ctx, scopes, tools, byName, authenticate, request), {
      parse: 'none',
      detail: {
        ...detail,
        summary: 'MCP (Streamable HTTP, stateless): one JSON-RPC message per POST, answered as JSON',
        description:
          'Model Context Protocol endpoint for AI assistants. Send `Accept: application/json, text/event-stream`. ' +
          'Tools: list_connections, get_connection (connections:read); send_message, prepare_media_upload (messages:send); list_chats, list_messages (messages:read). ' +
          'Without a valid credential: 401 with `WWW-Authenticate: Bearer realm, error="invalid_token", error_description, scope` (every scope the tools use) `, resource_metadata`. ' +
          'A bearer token lacking a tool’s scope gets 403 with `WWW-Authenticate: Bearer … error="insufficient_scope", scope=…`. ' +
          'Browser clients: CORS preflights are answered; a request whose `Origin` is not allowed (`MCP_ALLOWED_ORIGINS`; default the service’s own origin and http://localhost, 127.0.0.1, [::1] on any port) gets 403 (DNS-rebinding protection); requests without `Origin` are not checked.',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', description: 'A JSON-RPC 2.0 message' } } } },
        responses: {
          '200': { description: 'The JSON-RPC 2.0 answer', content: { 'application/json': { schema: { type: 'object', description: 'A JSON-RPC 2.0 response' } } } },
          '401': { description: 'No or bad credential; `WWW-Authenticate` carries error="invalid_token", the scopes to ask for and the protected-resource metadata' },
          '403': {
            description:
              'insufficient_scope for the tool called (`WWW-Authenticate` names the scopes held plus the missing one), or an `Origin` that may not call the endpoint. ' +
              'The grant remembers a scope challenge for 10 minutes: its next refresh is refused once (`invalid_grant`) so the client steps up through /v3/oauth/authorize.',
          },
        },
      },
    })
    .get(MCP_PATH, () => methodNotAllowed(), { detail: { ...detail, summary: 'Not offered: the endpoint is stateless (405)', hide: true } })
    .delete(MCP_PATH, () => methodNotAllowed(), { detail: { ...detail, summary: 'Not offered: the endpoint has no sessions (405)', hide: true } });
}

async function handlePost(
  ctx: AppContext,
  scopes: string,
  tools: McpToolDefinition[],
  byName: Map<string, McpToolDefinition>,
  authenticate: McpAuthenticator,
  request: Request,
): Promise<Response> {
  // The body is read (bounded, from a copy) before any authentication work, like every route's.
  let text: string;
  try {
    text = await readText(request.clone(), bodyLimits(ctx.config).body);
  } catch (error) {
    return errorResponse('UNKNOWN', error);
  }
  let actor: Actor;
  try {
    actor = await authenticate(request);
  } catch (error) {
    const response = errorResponse('UNKNOWN', error);
    // A 401 always says where to learn how to get a token (RFC 9728), so MCP clients find the
    // authorization server, and which scopes to ask for: every scope the tools use (spec 7.5).
    if (response.status === 401 && !response.headers.has('www-authenticate')) {
      const refused = new OAuthError('invalid_token', 'no valid API key or access token was sent', 'unauthenticated', scopes);
      response.headers.set('www-authenticate', bearerChallenge(refused, mcpResourceMetadataUrl(ctx.config.publicUrl)));
    }
    return response;
  }

  const problem = jsonTextProblem(text);
  if (problem) return errorResponse('UNKNOWN', badRequest([`body ${problem}`]));
  const body = parsedOrUndefined(text);
  if (actor.scopes !== undefined && body !== undefined) {
    for (const name of toolCalls(body)) {
      const tool = byName.get(name);
      if (tool && !satisfies(actor.scopes, tool.scopes)) {
        const missing = tool.scopes[0];
        // The challenge asks for what the caller already holds here plus the missing scope, so a
        // client stepping up does not lose what it had (MCP authorization, scope challenges).
        const challenged = [...actor.scopes, missing];
        await rememberScopeChallenge(baseStores(ctx.db), ctx, actor.oauthGrantId, challenged);
        return insufficientScope(ctx.config.publicUrl, joinScopes(challenged), `The tool ${tool.name} needs the scope ${missing}`);
      }
    }
  }

  const server = createMcpServer(tools, { actor, ctx });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    // Bodies that are not JSON go to the transport as they came: it answers them in JSON-RPC terms (-32700).
    return await transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body });
  } finally {
    await server.close();
  }
}

/** The JSON body; undefined when it is not JSON (the transport answers that in JSON-RPC terms, -32700). */
function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Names of the tools a JSON-RPC message (or batch) calls. */
function toolCalls(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => {
    if (typeof m !== 'object' || m === null) return [];
    const { method, params } = m as { method?: unknown; params?: { name?: unknown } };
    return method === 'tools/call' && typeof params?.name === 'string' ? [params.name] : [];
  });
}

/** What the SDK answers without sessions: a JSON-RPC error, 405. */
function methodNotAllowed(): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }), {
    status: 405,
    headers: { allow: 'POST', 'content-type': 'application/json' },
  });
}
