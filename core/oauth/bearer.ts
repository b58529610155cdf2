import type { Actor } from '../identity/identity.ts';
import { forbidden } from '../shared/errors.ts';
import { hashSecret } from '../tokens/secret.ts';
import { tokenAlive } from './artefacts.ts';
import { OAuthError } from './errors.ts';
import { withinResource } from './resource.ts';
import type { OAuthDeps, OAuthStores } from './store.ts';

/**
 * `Authorization: Bearer` on the API (spec 5.3, 7.5): the person who approved, in the workspace
 * fixed at consent, with their current roles narrowed by the approved scopes. A token bound to
 * a resource answers 401 outside it.
 */
export async function authenticateBearer(
  stores: OAuthStores,
  deps: Pick<OAuthDeps, 'clock'>,
  input: { token: string | undefined; requestUrl: string; accountId: string | undefined },
): Promise<Actor> {
  if (!input.token) throw invalidToken('the access token is missing');
  const token = await stores.oauth.findToken(hashSecret(input.token));
  if (!token || token.kind !== 'ACCESS') throw invalidToken('the access token is unknown');
  if (!tokenAlive(token, deps.clock.now())) throw invalidToken('the access token expired or was revoked');
  if (token.resource !== null && !withinResource(token.resource, input.requestUrl)) {
    throw invalidToken(`the access token was issued for ${token.resource} and is not valid here`);
  }
  const membership = await stores.identity.getMembership(token.workspaceId, token.userId);
  if (!membership) throw invalidToken('the person who approved this app is no longer a member of its workspace');
  if (input.accountId !== undefined && input.accountId !== token.workspaceId) {
    throw forbidden('This token is bound to a different workspace; re-authorize to switch');
  }
  return { userId: token.userId, workspaceId: token.workspaceId, roles: membership.roles, scopes: token.scopes, oauthGrantId: token.consentId };
}

function invalidToken(description: string): OAuthError {
  return new OAuthError('invalid_token', description, 'unauthenticated');
}
