import { OAuthError } from '../../core/oauth/errors.ts';
import { challenge } from '../http/auth.ts';

/** The MCP endpoint's path and its protected-resource document (RFC 9728 path form). */
export const MCP_PATH = '/v3/mcp';

export function mcpResourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource${MCP_PATH}`;
}

/** The MCP authorization "scope challenge": 403 naming the scope the tool needs (spec 7.5). */
export function insufficientScope(publicUrl: string, scope: string, description: string): Response {
  return challenge(new OAuthError('insufficient_scope', description, 'forbidden', scope), mcpResourceMetadataUrl(publicUrl)).response;
}
