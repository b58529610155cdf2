/**
 * The scope challenge of the MCP endpoint (spec 7.5; MCP authorization, "scope challenge"):
 * 403, `WWW-Authenticate: Bearer realm="switchboard", error="insufficient_scope",
 * error_description=…, scope=…, resource_metadata=…` and the OAuth JSON body
 * `{ error, error_description }`.
 */

export const MCP_PATH = '/v3/mcp';

/** The protected-resource document of the MCP endpoint (RFC 9728 path form). */
export function mcpResourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource${MCP_PATH}`;
}

export function insufficientScope(publicUrl: string, scope: string, description: string): Response {
  return bearerError(403, publicUrl, 'insufficient_scope', description, scope);
}

function bearerError(status: number, publicUrl: string, error: string, description: string, scope?: string): Response {
  const params = [
    `realm="switchboard"`,
    `error="${error}"`,
    `error_description="${quoted(description)}"`,
    ...(scope ? [`scope="${quoted(scope)}"`] : []),
    `resource_metadata="${quoted(mcpResourceMetadataUrl(publicUrl))}"`,
  ];
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { 'content-type': 'application/json', 'www-authenticate': `Bearer ${params.join(', ')}`, 'cache-control': 'no-store' },
  });
}

/** A quoted-string of RFC 9110: backslash and double quote escaped; control characters dropped. */
function quoted(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/["\\]/g, (c) => `\\${c}`);
}
