import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { useBrowser } from '../support/browser.ts';
import { useTestService } from '../support/service.ts';
import { authorizeInBrowser, ownerWithPassword } from '../support/oauth.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Client ID Metadata Documents (issue 20 item 11; draft-ietf-oauth-client-id-metadata-document,
 * MCP authorization "client registration"): a client uses the URL of a JSON document about itself
 * as `client_id`, with no registration. The service fetches it through the outbound policy, checks
 * it, caches it, enforces its redirect URIs and shows its name and host on the consent screen.
 *
 * The documents are served by a real HTTP server on 127.0.0.1; plain http is accepted there only
 * because the test service runs with OUTBOUND_ALLOW=127.0.0.0/8 (elsewhere https is required).
 * The client is oauth4webapi, the person approves in real Chromium.
 */
let owner: { userId: string; workspaceId: string; token: string; email: string };
let as: oauth.AuthorizationServer;
let issuer: URL;
let documents: ReturnType<typeof Bun.serve>;
let base: string;
const REDIRECT = 'http://127.0.0.1:8977/callback'; // intercepted in the browser; nothing listens
const insecure = { [oauth.allowInsecureRequests]: true };
/** Path → what the document server answers; every fetch is counted. */
const served = new Map<string, { body: string; status?: number; headers?: Record<string, string> }>();
const hits = new Map<string, number>();
const shots = process.env.SCREENSHOT_DIR ?? '/tmp';

const browser = useBrowser();
// Many authorize requests in a minute here; the per-IP limit (section 8) is tested elsewhere.
const service = useTestService({ env: { OAUTH_AUTHORIZE_RATE_LIMIT: '1000' } });

beforeAll(async () => {
  documents = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const answer = served.get(path);
      if (!answer) return new Response('not found', { status: 404 });
      return new Response(answer.body, { status: answer.status ?? 200, headers: { 'content-type': 'application/json', ...answer.headers } });
    },
  });
  base = `http://127.0.0.1:${documents.port}`;
  owner = await ownerWithPassword(service, 'cimd-owner', 'Acme');
  issuer = new URL(service.runtime.ctx.config.publicUrl);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}, HOOK_TIMEOUT);

afterAll(async () => {
  documents?.stop(true);
});

/** Publishes a document at `path` and returns its URL (the client_id). */
function publish(path: string, metadata: (clientId: string) => Record<string, unknown>, headers: Record<string, string> = {}): string {
  const clientId = `${base}${path}`;
  served.set(path, { body: JSON.stringify(metadata(clientId)), headers });
  return clientId;
}

const goodDocument = (clientId: string) => ({
  client_id: clientId,
  client_name: 'Docs Assistant',
  client_uri: 'https://assistant.example',
  redirect_uris: [REDIRECT],
  grant_types: ['authorization_code', 'refresh_token'],
  token_endpoint_auth_method: 'none',
});

async function authorizeUrl(clientId: string, options: { redirectUri?: string; scope?: string } = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', options.redirectUri ?? REDIRECT);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', options.scope ?? 'connections:read');
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { url, verifier, state };
}

/** The authorize endpoint's answer without a browser: a JSON error before the client is trusted (spec 7.4). */
async function authorizeError(clientId: string, options: { redirectUri?: string } = {}) {
  const { url } = await authorizeUrl(clientId, options);
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, body: res.status === 302 ? undefined : await res.json() };
}

describe('discovery', () => {
  test('the authorization-server metadata advertises client_id_metadata_document_supported', async () => {
    const res = await fetch(`${issuer.origin}/.well-known/oauth-authorization-server`);
    expect((await res.json()).client_id_metadata_document_supported).toBe(true);
  });
});

describe('a client known only by its metadata document URL', () => {
  let clientId: string;
  let client: oauth.Client;
  let tokens: oauth.TokenEndpointResponse;
  let consent: { name: string; host: string; warning: string } | undefined;

  test('authorize: the document is fetched, the consent screen shows its client_name and host, the code is exchanged without a secret', async () => {
    clientId = publish('/clients/docs-assistant.json', goodDocument, { 'cache-control': 'public, max-age=600' });
    client = { client_id: clientId, token_endpoint_auth_method: 'none' };
    const { url, verifier, state } = await authorizeUrl(clientId);
    const back = await browser.withPage((page) =>
      authorizeInBrowser(page, url.toString(), REDIRECT, owner, {
        workspaceId: owner.workspaceId,
        onConsentPage: async (p) => {
          consent = {
            name: await p.locator('#client-name').innerText(),
            host: await p.locator('#metadata-document-host strong').innerText(),
            warning: await p.locator('#metadata-document-host').innerText(),
          };
          await p.screenshot({ path: `${shots}/consent-metadata-document.png`, fullPage: true });
        },
      }),
    );
    expect(consent).toEqual({ name: 'Docs Assistant', host: `127.0.0.1:${documents.port}`, warning: expect.stringContaining('its name was chosen by the app') });
    expect(hits.get('/clients/docs-assistant.json')).toBe(1);

    const params = oauth.validateAuthResponse(as, client, back, state);
    tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure));
    expect(tokens.scope).toBe('connections:read');
    expect(tokens.refresh_token).toBeString();
    const res = await fetch(`${service.url}/v3/connections`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(res.status).toBe(200);
  }, HOOK_TIMEOUT);

  test('the document is cached (Cache-Control max-age=600): a refresh and a new authorization do not fetch it again', async () => {
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
    expect(refreshed.scope).toBe('connections:read');
    const again = await fetch((await authorizeUrl(clientId)).url, { redirect: 'manual' });
    expect(again.status).toBe(302);
    expect(hits.get('/clients/docs-assistant.json')).toBe(1);
  }, HOOK_TIMEOUT);

  test("the document's redirect_uris are enforced exactly", async () => {
    // Spec 4.1: redirect_uri "exact match"; before the redirect URI is trusted the error is a JSON body (7.4).
    const other = await authorizeError(clientId, { redirectUri: `${REDIRECT}/elsewhere` });
    expect(other).toEqual({ status: 400, body: { error: 'invalid_redirect_uri', error_description: expect.any(String) } });
  });

  test('a public client: a secret at the token endpoint is invalid_client (401)', async () => {
    const res = await fetch(as.token_endpoint!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'sbrt_x', client_id: clientId, client_secret: 'guess' }),
    });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe('invalid_client');
  });
});

describe('documents that are refused: invalid_client with a reason, never a 500', () => {
  const cases: [string, (clientId: string) => Record<string, unknown> | string, string, { status?: number; headers?: Record<string, string> }?][] = [
    ['client_id differs from the URL', (id) => ({ ...goodDocument(id), client_id: `${id}?other` }), 'client_id must equal the URL'],
    ['a shared-secret auth method', (id) => ({ ...goodDocument(id), token_endpoint_auth_method: 'client_secret_basic' }), 'token_endpoint_auth_method must be none'],
    ['private_key_jwt (not supported: public clients only)', (id) => ({ ...goodDocument(id), token_endpoint_auth_method: 'private_key_jwt' }), 'token_endpoint_auth_method must be none'],
    ['a client secret in the document', (id) => ({ ...goodDocument(id), client_secret: 'published' }), 'must not contain a client secret'],
    ['no redirect_uris', (id) => ({ client_id: id, client_name: 'No redirects' }), 'redirect_uris'],
    ['not JSON', () => 'this is not json', 'not JSON'],
    ['larger than 5 KiB', (id) => ({ ...goodDocument(id), client_name: 'x'.repeat(200), padding: 'y'.repeat(6000) }), 'larger than 5120 bytes'],
    ['a 404', () => '{}', 'HTTP 404', { status: 404 }],
    ['a redirect (not followed)', () => '', 'HTTP 302', { status: 302, headers: { location: '/clients/elsewhere.json' } }],
  ];
  for (const [name, document, reason, answer] of cases) {
    test(name, async () => {
      const path = `/refused/${crypto.randomUUID()}.json`;
      const clientId = `${base}${path}`;
      const body = document(clientId);
      served.set(path, { body: typeof body === 'string' ? body : JSON.stringify(body), ...answer });
      const res = await authorizeError(clientId);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_client', error_description: expect.stringContaining(reason) });
    });
  }

  test('client_id URLs the draft forbids, and plain http outside OUTBOUND_ALLOW, are refused before any fetch', async () => {
    const refused = {
      'http://example.com/client.json': 'must be an https URL',
      [`${base}/`]: 'must have a path',
      [`${base}/a/../client.json`]: 'normal form',
      'https://user:pw@example.com/client.json': 'must not contain credentials',
      'https://10.1.2.3/client.json': 'outbound policy',
    };
    for (const [clientId, reason] of Object.entries(refused)) {
      const res = await authorizeError(clientId);
      expect({ clientId, ...res }).toEqual({ clientId, status: 400, body: { error: 'invalid_client', error_description: expect.stringContaining(reason) } });
    }
  });
});

describe('dynamic registration keeps working beside metadata documents', () => {
  test('POST /v3/oauth/register → 201 and its client_id authorizes', async () => {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, insecure),
    );
    const res = await fetch((await authorizeUrl(registered.client_id)).url, { redirect: 'manual' });
    expect(res.status).toBe(302);
  });
});
