import { Elysia } from 'elysia';
import { SCOPES } from '../../../core/oauth/scopes.ts';
import { mcpScopes } from '../../mcp/registry.ts';
import type { Plugin } from '../../../plugins/kernel/plugin.ts';
import type { AppContext } from '../context.ts';
import { DISCOVERY_RESPONSES } from './oauth-docs.ts';

const documented = DISCOVERY_RESPONSES();
const CACHED = { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' };

/**
 * The three discovery documents (spec 4.1; RFC 8414, RFC 9728): no limit, cached 5 minutes.
 * The issuer is `PUBLIC_URL`.
 */
export function oauthDiscoveryRoutes(ctx: AppContext, plugins: Plugin[]) {
  const document = (body: object) => new Response(JSON.stringify(body), { headers: CACHED });
  return new Elysia({ name: 'routes.oauth-discovery', detail: { tags: ['OAuth'] } })
    .get('/.well-known/oauth-authorization-server', () => document(authorizationServerMetadata(ctx.config.publicUrl)), {
      detail: { summary: 'Authorization server metadata (RFC 8414)', responses: documented as never },
    })
    .get(
      '/.well-known/oauth-protected-resource',
      () =>
        document({
          resource: ctx.config.publicUrl,
          resource_name: 'Switchboard API',
          authorization_servers: [ctx.config.publicUrl],
          scopes_supported: [...SCOPES],
          bearer_methods_supported: ['header'],
          resource_documentation: `${ctx.config.publicUrl}/docs`,
        }),
      { detail: { summary: 'The API as a protected resource (RFC 9728)', responses: documented as never } },
    )
    .get(
      '/.well-known/oauth-protected-resource/v3/mcp',
      () =>
        document({
          resource: `${ctx.config.publicUrl}/v3/mcp`,
          resource_name: 'Switchboard MCP',
          authorization_servers: [ctx.config.publicUrl],
          scopes_supported: mcpScopes(plugins),
          bearer_methods_supported: ['header'],
        }),
      { detail: { summary: 'The MCP endpoint as a protected resource, with only the scopes its tools use', responses: documented as never } },
    );
}

export function authorizationServerMetadata(issuer: string) {
  const clientAuth = ['none', 'client_secret_basic', 'client_secret_post'];
  return {
    issuer,
    authorization_endpoint: `${issuer}/v3/oauth/authorize`,
    token_endpoint: `${issuer}/v3/oauth/token`,
    registration_endpoint: `${issuer}/v3/oauth/register`,
    revocation_endpoint: `${issuer}/v3/oauth/revoke`,
    introspection_endpoint: `${issuer}/v3/oauth/introspect`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: clientAuth,
    revocation_endpoint_auth_methods_supported: clientAuth,
    introspection_endpoint_auth_methods_supported: clientAuth,
    prompt_values_supported: ['consent', 'none'],
    authorization_response_iss_parameter_supported: true,
    // A client may use the https URL of its Client ID Metadata Document as client_id, without registering.
    client_id_metadata_document_supported: true,
    service_documentation: `${issuer}/docs`,
  };
}
