import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { challengeParams, TEST_PASSWORD, ownerWithPassword } from '../support/oauth.ts';
import { useTestService } from '../support/service.ts';
import { MovableClock } from '../support/movable-clock.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 20 items 13, 14 and 16 (first half), black-box over HTTP against a started service:
 *
 * - 13, spec 5.3: "confidential client uses client_secret_basic or client_secret_post" (4.1: "a
 *   confidential client must [send client_secret], by HTTP Basic or as a form field"): either
 *   method works whatever the client registered; both at once is invalid_request (RFC 6749 2.3).
 * - 14, spec 7.5: "invalid_token | 401 | token missing, expired, revoked, or issued for a different
 *   resource" … "WWW-Authenticate: Bearer realm, error, error_description, resource_metadata", plus
 *   the scope the resource needs (MCP authorization: "servers SHOULD include a scope parameter").
 * - 16, spec 3.3: "Pending authorization request | 10 minutes elapse | timeout | Expires."; 7.4
 *   keeps `access_denied` for "a person refused or their role does not allow"; an expired request
 *   goes back as `invalid_request`.
 */

/** The service's clock, moved by the expiry test; starts at the real time. */
const clock = new MovableClock();
let browser: TestBrowser;
let issuer: string;
let owner: { userId: string; workspaceId: string; token: string; email: string };
const REDIRECT = 'http://127.0.0.1:8765/callback';

const service = useTestService({ plugins: [], clock, env: { OAUTH_AUTHORIZE_RATE_LIMIT: '1000', OAUTH_TOKEN_RATE_LIMIT: '1000' } });

beforeAll(async () => {
  issuer = service.runtime.ctx.config.publicUrl;
  browser = await startBrowser();
  owner = await ownerWithPassword(service, 'conformance', 'Conformance');
}, HOOK_TIMEOUT);

afterAll(async () => {
  await browser?.close();
}, HOOK_TIMEOUT);

async function register(metadata: Record<string, unknown>): Promise<any> {
  const res = await service.call('POST', '/v3/oauth/register', { body: { redirect_uris: [REDIRECT], ...metadata } });
  expect(res.status).toBe(201);
  return res.body;
}

/** The authorize URL that asks for `connections:read` with the consent screen shown (PKCE S256 of `verifier`). */
async function consentUrl(clientId: string, verifier: string, state: string): Promise<URL> {
  const url = new URL(`${issuer}/v3/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'connections:read',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    prompt: 'consent',
  }))
    url.searchParams.set(k, v);
  return url;
}

const basic = (id: string, secret: string) => `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`;

async function post(path: string, form: Record<string, string>, authorization?: string) {
  return service.call('POST', path, {
    body: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization && { authorization }) },
  });
}

describe('item 13: a confidential client may use client_secret_basic or client_secret_post', () => {
  let basicClient: any;
  let postClient: any;

  beforeAll(async () => {
    basicClient = await register({ token_endpoint_auth_method: 'client_secret_basic' });
    postClient = await register({ token_endpoint_auth_method: 'client_secret_post' });
  });

  test('revoke: each client is accepted with the method it did not register', async () => {
    const asPost = await post('/v3/oauth/revoke', { token: 'sbat_unknown', client_id: basicClient.client_id, client_secret: basicClient.client_secret });
    expect(asPost.status).toBe(200);
    const asBasic = await post('/v3/oauth/revoke', { token: 'sbat_unknown' }, basic(postClient.client_id, postClient.client_secret));
    expect(asBasic.status).toBe(200);
  });

  test('token: the client is authenticated and the request goes on to the grant (invalid_grant for an unknown code, not invalid_client)', async () => {
    const grant = { grant_type: 'authorization_code', code: 'not-a-code', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) };
    const asPost = await post('/v3/oauth/token', { ...grant, client_id: basicClient.client_id, client_secret: basicClient.client_secret });
    expect(asPost.status).toBe(400);
    expect(asPost.body.error).toBe('invalid_grant');
    const asBasic = await post('/v3/oauth/token', grant, basic(postClient.client_id, postClient.client_secret));
    expect(asBasic.status).toBe(400);
    expect(asBasic.body.error).toBe('invalid_grant');
  });

  test('a full code exchange by a client_secret_basic client sending its secret as a form field (client_secret_post)', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = await consentUrl(basicClient.client_id, verifier, 's1');
    const back = await consentInBrowser(url.toString(), async () => {});
    const code = back.searchParams.get('code');
    expect(code).toBeTruthy();
    const res = await post('/v3/oauth/token', { grant_type: 'authorization_code', code: code!, redirect_uri: REDIRECT, code_verifier: verifier, client_id: basicClient.client_id, client_secret: basicClient.client_secret });
    expect(res.status).toBe(200);
    expect(res.body.access_token).toStartWith('sbat_');
  });

  test('still refused: a wrong secret by either method (401 invalid_client), and both methods at once (400 invalid_request)', async () => {
    const wrongPost = await post('/v3/oauth/revoke', { token: 'x', client_id: basicClient.client_id, client_secret: `${basicClient.client_secret}x` });
    expect(wrongPost.status).toBe(401);
    expect(wrongPost.body.error).toBe('invalid_client');
    const wrongBasic = await post('/v3/oauth/revoke', { token: 'x' }, basic(postClient.client_id, 'wrong'));
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.body.error).toBe('invalid_client');
    const both = await post('/v3/oauth/revoke', { token: 'x', client_id: basicClient.client_id, client_secret: basicClient.client_secret }, basic(basicClient.client_id, basicClient.client_secret));
    expect(both.status).toBe(400);
    expect(both.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  test('a public client is unchanged: client_id and no secret', async () => {
    const publicClient = await register({ token_endpoint_auth_method: 'none' });
    expect((await post('/v3/oauth/revoke', { token: 'x', client_id: publicClient.client_id })).status).toBe(200);
    const withSecret = await post('/v3/oauth/revoke', { token: 'x' }, basic(publicClient.client_id, 'anything'));
    expect(withSecret.status).toBe(401);
    expect(withSecret.body.error).toBe('invalid_client');
  });
});

describe('item 14: a 401 says invalid_token, where the metadata is, and which scope to ask for', () => {
  test('no credential on a REST route: error="invalid_token", the route’s scope and resource_metadata (body unchanged)', async () => {
    const res = await service.call('GET', '/v3/connections');
    expect(res.status).toBe(401);
    // Spec 7.5 names a missing token invalid_token (RFC 6750 3.1 would send no code; the spec rules here).
    expect(challengeParams(res.headers.get('www-authenticate'))).toEqual({
      realm: 'switchboard',
      error: 'invalid_token',
      error_description: expect.any(String),
      scope: 'connections:read',
      resource_metadata: `${issuer}/.well-known/oauth-protected-resource`,
    });
    expect(res.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
  });

  test('an invalid bearer token: the same challenge with the route’s scope', async () => {
    const res = await service.call('POST', '/v3/connections', { headers: { authorization: 'Bearer sbat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, body: {} });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
    expect(challengeParams(res.headers.get('www-authenticate'))).toMatchObject({ error: 'invalid_token', scope: 'connections:write', resource_metadata: `${issuer}/.well-known/oauth-protected-resource` });
  });

  test('a route closed to OAuth clients names no scope (none would open it)', async () => {
    const res = await service.call('GET', '/v3/api-tokens');
    expect(res.status).toBe(401);
    const params = challengeParams(res.headers.get('www-authenticate'));
    expect(params.error).toBe('invalid_token');
    expect(params.scope).toBeUndefined();
  });

  test('the MCP endpoint: the official SDK client sees a 401 asking for every scope its tools use', async () => {
    const seen: Response[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(`${issuer}/v3/mcp`), {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        seen.push(res.clone());
        return res;
      },
    });
    const client = new Client({ name: 'no-credential', version: '1.0.0' });
    await client.connect(transport).catch(() => {});
    await client.close().catch(() => {});
    expect(seen[0]?.status).toBe(401);
    const metadata = await (await fetch(`${issuer}/.well-known/oauth-protected-resource/v3/mcp`)).json();
    expect(challengeParams(seen[0]!.headers.get('www-authenticate'))).toEqual({
      realm: 'switchboard',
      error: 'invalid_token',
      error_description: expect.any(String),
      scope: metadata.scopes_supported.join(' '),
      resource_metadata: `${issuer}/.well-known/oauth-protected-resource/v3/mcp`,
    });
  });
});

/** Signs in and reaches the consent screen in Chromium, runs `beforeApprove`, approves; returns where the browser was sent back. */
async function consentInBrowser(authorizeUrl: string, beforeApprove: () => Promise<void>): Promise<URL> {
  return browser.withPage(async (page) => {
    let landed: string | undefined;
    await page.route(`${REDIRECT}**`, async (route) => {
      landed = route.request().url();
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' });
    });
    await page.goto(authorizeUrl);
    if (new URL(page.url()).pathname === '/signin') {
      await page.fill('#email', owner.email);
      await page.fill('#password', TEST_PASSWORD);
      await Promise.all([page.waitForLoadState('load'), page.click('#sign-in')]);
    }
    await page.waitForSelector('#approve');
    if (await page.$(`#workspace-${owner.workspaceId}`)) await page.check(`#workspace-${owner.workspaceId}`);
    await beforeApprove();
    await page.click('#approve');
    await page.waitForURL((url) => url.toString().startsWith(REDIRECT));
    if (!landed) throw new Error(`never came back to ${REDIRECT}: ${page.url()}`);
    return new URL(landed);
  });
}

describe('item 16: an expired authorization request is not access_denied', () => {
  test('approving after 10 minutes on the consent page → redirect with invalid_request "authorization request expired", state and iss', async () => {
    const client = await register({ token_endpoint_auth_method: 'none' });
    const verifier = oauth.generateRandomCodeVerifier();
    const url = await consentUrl(client.client_id, verifier, 'slow-person');
    // The person leaves the consent page open for more than 10 minutes, then approves.
    const back = await consentInBrowser(url.toString(), async () => clock.advance(10 * 60_000 + 1_000));
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toContain('authorization request expired');
    expect(back.searchParams.get('state')).toBe('slow-person');
    expect(back.searchParams.get('iss')).toBe(issuer);
    expect(back.searchParams.get('code')).toBeNull();
  });
});
