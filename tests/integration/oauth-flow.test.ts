import { beforeAll, describe, expect, test } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { useBrowser } from '../support/browser.ts';
import { useTestService } from '../support/service.ts';
import { authorizeInBrowser, ownerWithPassword } from '../support/oauth.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * The whole authorization server driven by oauth4webapi, a strict client no one here wrote,
 * with a person approving in real Chromium (spec 4.1, 2.6, 3.3, 7.3).
 */
let owner: { userId: string; workspaceId: string; token: string; email: string };
let as: oauth.AuthorizationServer;
let issuer: URL;
const REDIRECT = 'http://127.0.0.1:8976/callback'; // intercepted in the browser; nothing listens
const insecure = { [oauth.allowInsecureRequests]: true };

const browser = useBrowser();
const service = useTestService();

beforeAll(async () => {
  owner = await ownerWithPassword(service, 'oauth-owner', 'Acme');
  issuer = new URL(service.runtime.ctx.config.publicUrl);
  // Spec 4.1: "GET /.well-known/oauth-authorization-server | issuer, endpoints, supported scopes, grant types, code_challenge_methods_supported, prompt_values_supported"
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}, HOOK_TIMEOUT);

async function register(metadata: Partial<oauth.Client>): Promise<oauth.Client> {
  return oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], ...metadata }, insecure));
}

async function authorize(client: oauth.Client, scope: string, options: { resource?: string; uncheck?: string[]; workspaceId?: string; prompt?: string } = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', REDIRECT);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (options.resource) url.searchParams.set('resource', options.resource);
  if (options.prompt) url.searchParams.set('prompt', options.prompt);
  // The workspace the owner's API key acts in, rather than the preselected personal account.
  const choice = { workspaceId: owner.workspaceId, ...options };
  const back = await browser.withPage((page) => authorizeInBrowser(page, url.toString(), REDIRECT, owner, choice));
  // Spec 4.1: "After consent the browser is redirected to redirect_uri with query code, state, iss." (RFC 9207 check inside)
  const params = oauth.validateAuthResponse(as, client, back, state);
  return { params, verifier };
}

async function exchange(client: oauth.Client, auth: oauth.ClientAuth, params: URLSearchParams, verifier: string) {
  return oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, insecure));
}

const api = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${service.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

describe('a public client (PKCE, no secret) with refresh tokens', () => {
  let client: oauth.Client;
  let tokens: oauth.TokenEndpointResponse;

  test('registers itself, is authorized in the browser and exchanges the code', async () => {
    client = await register({ client_name: 'Assistant', token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
    expect(client.client_secret).toBeUndefined();
    const { params, verifier } = await authorize(client, 'connections:read messages:send');
    tokens = await exchange(client, oauth.None(), params, verifier);
    // Spec 2.6: "{ access_token, token_type: "Bearer", expires_in: <seconds, 3600>, refresh_token, scope }"
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeString();
    expect(tokens.scope).toBe('connections:read messages:send');
  }, HOOK_TIMEOUT);

  test('the access token works on the API within its scopes, and is 403 insufficient_scope outside them', async () => {
    expect((await api('/v3/connections', tokens.access_token)).status).toBe(200);
    const denied = await api('/v3/webhooks', tokens.access_token);
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({ error: 'insufficient_scope', error_description: expect.any(String) });
    // Spec 7.5: "on insufficient_scope it names the missing scope"
    expect(denied.headers.get('www-authenticate')).toContain('scope="webhooks:read"');
    expect(denied.headers.get('www-authenticate')).toContain(`resource_metadata="${issuer.origin}/.well-known/oauth-protected-resource"`);
  });

  test('consent management is not available to OAuth clients', async () => {
    // Spec 5.3: "An operation with no covering scope is closed to OAuth clients ... Consent management is such a case."
    const res = await api('/v3/oauth/consents', tokens.access_token);
    expect(res.status).toBe(403);
    expect((await res.json()).error_description).toContain('not available to OAuth clients');
  });

  test('X-Account-Id naming another workspace is 403', async () => {
    // Spec 5.3: "X-Account-Id naming a different workspace answers 403"
    const res = await api('/v3/connections', tokens.access_token, { headers: { 'x-account-id': crypto.randomUUID() } });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toContain('bound to a different workspace');
  });

  test('refresh rotates: the new pair works, the old refresh token replayed revokes the whole grant', async () => {
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await api('/v3/connections', refreshed.access_token)).status).toBe(200);

    // Spec 3.3: "Refresh token | presented a second time | replay | Entire grant ... revoked; invalid_grant."
    const replay = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    expect(replay.status).toBe(400);
    expect((await replay.json()).error).toBe('invalid_grant');
    expect((await api('/v3/connections', refreshed.access_token)).status).toBe(401);
    expect((await api('/v3/connections', tokens.access_token)).status).toBe(401);
    const afterReplay = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, insecure);
    expect((await afterReplay.json()).error).toBe('invalid_grant');
  }, HOOK_TIMEOUT);
});

describe('a confidential client (client_secret_basic)', () => {
  let client: oauth.Client;
  let tokens: oauth.TokenEndpointResponse;

  test('gets a secret at registration and authenticates with HTTP Basic', async () => {
    client = await register({ client_name: 'Server app', grant_types: ['authorization_code', 'refresh_token'] });
    // Spec 2.5: "client_secret | Only for a confidential client"; "client_secret_expires_at | 0"
    expect(client.client_secret).toBeString();
    expect(client.client_secret_expires_at).toBe(0);
    const { params, verifier } = await authorize(client, 'profile webhooks:read');
    tokens = await exchange(client, oauth.ClientSecretBasic(client.client_secret as string), params, verifier);
    expect(tokens.scope).toBe('profile webhooks:read');
  }, HOOK_TIMEOUT);

  test('introspection tells the client about its own token', async () => {
    const res = await oauth.introspectionRequest(as, client, oauth.ClientSecretBasic(client.client_secret as string), tokens.access_token, insecure);
    const info = await oauth.processIntrospectionResponse(as, client, res);
    expect(info.active).toBe(true);
    expect(info.scope).toBe('profile webhooks:read');
    expect(info.client_id).toBe(client.client_id);
    expect(info.sub).toBe(owner.userId);
  });

  test('a narrowing refresh gives fewer scopes; a widening one is invalid_scope', async () => {
    const auth = oauth.ClientSecretBasic(client.client_secret as string);
    const wider = await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, { ...insecure, additionalParameters: { scope: 'profile webhooks:write' } });
    expect(wider.status).toBe(400);
    expect((await wider.json()).error).toBe('invalid_scope');
    const narrowed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, { ...insecure, additionalParameters: { scope: 'profile' } }),
    );
    expect(narrowed.scope).toBe('profile');
    expect((await api('/v3/webhooks', narrowed.access_token)).status).toBe(403);
    expect((await api('/v3/accounts', narrowed.access_token)).status).toBe(200);
    tokens = narrowed;
  }, HOOK_TIMEOUT);

  test('revoking the refresh token ends the grant; revoking garbage is 200 too', async () => {
    const auth = oauth.ClientSecretBasic(client.client_secret as string);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.refresh_token!, insecure));
    expect((await api('/v3/accounts', tokens.access_token)).status).toBe(401);
    // Spec 4.1: "200 for any input, including an unknown token"
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, 'not-a-token', insecure));
    const info = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure));
    expect(info.active).toBe(false);
  });
});

describe('audience binding and consent', () => {
  test('a token bound to the MCP resource answers 401 elsewhere in the API', async () => {
    const client = await register({ token_endpoint_auth_method: 'none' });
    const resource = `${issuer.origin}/v3/mcp`;
    const { params, verifier } = await authorize(client, 'connections:read', { resource });
    const tokens = await exchange(client, oauth.None(), params, verifier);
    // Spec 5.3: "when resource was requested, the token is accepted only under that path ... and answers 401 elsewhere"
    const elsewhere = await api('/v3/connections', tokens.access_token);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain('error="invalid_token"');
  }, HOOK_TIMEOUT);

  test('the person approves fewer scopes; the approved set is authoritative', async () => {
    const client = await register({ token_endpoint_auth_method: 'none' });
    const { params, verifier } = await authorize(client, 'connections:read webhooks:read', { uncheck: ['webhooks:read'] });
    const tokens = await exchange(client, oauth.None(), params, verifier);
    // Spec 2.6: "scope is the approved set and is authoritative"
    expect(tokens.scope).toBe('connections:read');
  }, HOOK_TIMEOUT);

  test('re-approval with fewer scopes revokes tokens issued under the old approval', async () => {
    const client = await register({ token_endpoint_auth_method: 'none' });
    const first = await authorize(client, 'connections:read webhooks:read');
    const old = await exchange(client, oauth.None(), first.params, first.verifier);
    expect((await api('/v3/webhooks', old.access_token)).status).toBe(200);
    // Spec 4.1: "prompt | consent forces the screen"; 3.3: "Consent | re-approval with fewer scopes | Tokens issued under the old approval are revoked."
    const second = await authorize(client, 'connections:read webhooks:read', { prompt: 'consent', uncheck: ['webhooks:read'] });
    const fresh = await exchange(client, oauth.None(), second.params, second.verifier);
    expect(fresh.scope).toBe('connections:read');
    expect((await api('/v3/connections', old.access_token)).status).toBe(401);
    expect((await api('/v3/connections', fresh.access_token)).status).toBe(200);
    const consents = await (await fetch(`${service.url}/v3/oauth/consents`, { headers: { apikey: owner.token } })).json();
    expect(consents.data.find((c: { clientId: string }) => c.clientId === client.client_id).scopes).toEqual(['connections:read']);
  }, HOOK_TIMEOUT);

  test('deleting the consent cuts the app off at once', async () => {
    const client = await register({ token_endpoint_auth_method: 'none', client_name: 'To be cut off' });
    const { params, verifier } = await authorize(client, 'connections:read');
    const tokens = await exchange(client, oauth.None(), params, verifier);
    const list = await (await fetch(`${service.url}/v3/oauth/consents?s=cut%20off`, { headers: { apikey: owner.token } })).json();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ clientName: 'To be cut off', scopes: ['connections:read'], userEmail: owner.email });
    const cut = await fetch(`${service.url}/v3/oauth/consents/${list.data[0].id}`, { method: 'DELETE', headers: { apikey: owner.token } });
    expect(cut.status).toBe(200);
    expect((await api('/v3/connections', tokens.access_token)).status).toBe(401);
  }, HOOK_TIMEOUT);
});
