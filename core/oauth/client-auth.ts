import { secretMatches } from '../tokens/secret.ts';
import type { OAuthClient } from './client.ts';
import { OAuthError } from './errors.ts';
import type { OAuthStores } from './store.ts';

/** How a client presented itself at the token, revocation or introspection endpoint. */
export interface ClientCredentials {
  /** From `Authorization: Basic` (client_secret_basic), already URL-decoded. */
  basic?: { clientId: string; secret: string };
  /** `client_id` and `client_secret` form or JSON fields. */
  clientId?: string;
  clientSecret?: string;
}

/**
 * Client authentication (spec 5.3, 7.3): a public client proves itself with PKCE and must not
 * send a secret; a confidential client sends its secret by HTTP Basic or as a form field,
 * either way whatever it registered (4.1 allows both; clients often pick one regardless), but never
 * both at once (RFC 6749 2.3.1: one method per request). Failures are `invalid_client` with 401.
 */
export async function authenticateClient(stores: OAuthStores, credentials: ClientCredentials): Promise<OAuthClient> {
  const { basic, clientId, clientSecret } = credentials;
  if (basic && clientSecret !== undefined) throw new OAuthError('invalid_request', 'send the client secret one way only (HTTP Basic or client_secret)');
  if (basic && clientId !== undefined && clientId !== basic.clientId) throw new OAuthError('invalid_request', 'client_id differs from the client named in HTTP Basic');
  const id = basic?.clientId ?? clientId;
  if (!id) throw invalidClient('client authentication is required (client_id)');
  const client = await stores.oauth.findClient(id);
  if (!client) throw invalidClient('unknown client');

  const presented = basic?.secret ?? clientSecret;
  if (client.authMethod === 'none') {
    if (presented !== undefined) throw invalidClient('a public client must not send a client secret');
    return client;
  }
  if (presented === undefined) throw invalidClient('the client secret is missing');
  if (!client.secretHash || !secretMatches(presented, client.secretHash)) throw invalidClient('the client secret is wrong');
  return client;
}

function invalidClient(description: string): OAuthError {
  return new OAuthError('invalid_client', description, 'unauthenticated');
}
