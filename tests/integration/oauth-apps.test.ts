import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { setClientVerified } from '../../core/oauth/clients.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { useTestService } from '../support/service.ts';
import { authorizeInBrowser, TEST_PASSWORD, ownerWithPassword, withPassword } from '../support/oauth.ts';
import { HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Dashboard-created OAuth apps (spec 2.5, 5.3, section 8): expiry switched off, locked required
 * scopes, the verified badge; and prompt=none once an approval stands.
 */
let browser: TestBrowser;
let owner: { userId: string; workspaceId: string; token: string; email: string };
let issuer: string;
const REDIRECT = 'http://127.0.0.1:8976/callback'; // intercepted in the browser; nothing listens

const service = useTestService({ env: { OAUTH_AUTHORIZE_RATE_LIMIT: '1000' } });

beforeAll(async () => {
  browser = await startBrowser();
  owner = await ownerWithPassword(service, 'apps-owner', 'Apps');
  issuer = service.runtime.ctx.config.publicUrl;
}, HOOK_TIMEOUT);

afterAll(async () => {
  await browser?.close();
});

async function pkce() {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

function authorizeUrl(clientId: string, scope: string, challenge: string, extra: Record<string, string> = {}) {
  return authorizeUrlFor(REDIRECT, clientId, scope, challenge, extra);
}

function authorizeUrlFor(redirectUri: string, clientId: string, scope: string, challenge: string, extra: Record<string, string> = {}) {
  const url = new URL(`${issuer}/v3/oauth/authorize`);
  const params = { client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope, state: 'xyz', code_challenge: challenge, code_challenge_method: 'S256', ...extra };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

async function tokenRequest(body: Record<string, string>, basic?: { id: string; secret: string }) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (basic) headers.authorization = `Basic ${btoa(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`)}`;
  const res = await fetch(`${issuer}/v3/oauth/token`, { method: 'POST', headers, body: new URLSearchParams(body) });
  return { status: res.status, body: await res.json() };
}

/** Dynamic client registration (POST /v3/oauth/register, no token): answers the registered client. */
async function registerClient(metadata: Record<string, unknown>): Promise<any> {
  const res = await fetch(`${issuer}/v3/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
  return res.json();
}

async function createApp(body: Record<string, unknown>, apikey = owner.token) {
  const res = await fetch(`${service.url}/v3/oauth/clients`, { method: 'POST', headers: { apikey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

describe('dashboard-created apps', () => {
  test('only an Owner or Admin creates one; a Manager is 403 (roles matrix: API tokens and OAuth apps)', async () => {
    const manager = await memberWithToken(service, owner, 'MANAGER');
    const refused = await createApp({ redirect_uris: [REDIRECT] }, manager.token);
    expect(refused.status).toBe(403);
    const admin = await memberWithToken(service, owner, 'ADMIN');
    const created = await createApp({ redirect_uris: [REDIRECT], client_name: 'Admin app' }, admin.token);
    expect(created.status).toBe(201);
    const list = await (await fetch(`${service.url}/v3/oauth/clients`, { headers: { apikey: owner.token } })).json();
    expect(list.map((c: { client_name: string }) => c.client_name)).toContain('Admin app');
    expect(list.every((c: { client_secret?: string }) => c.client_secret === undefined)).toBe(true);
  });

  test('a broken registration rule answers in the API’s standard shape', async () => {
    const bad = await createApp({ redirect_uris: ['http://evil.example/cb'] });
    expect(bad.status).toBe(400);
    expect(bad.body.message[0]).toStartWith('invalid_redirect_uri');
    const outside = await createApp({ redirect_uris: [REDIRECT], scope: 'profile', required_scopes: ['webhooks:read'] });
    expect(outside.status).toBe(400);
  });

  test('"Expire access tokens" off: no expires_in, no refresh token, and the token keeps working', async () => {
    // Section 8: "its access token then has no expiry, no expires_in is returned and no refresh token is issued".
    const app = await createApp({
      client_name: 'Never expires',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      expire_access_tokens: false,
    });
    expect(app.status).toBe(201);
    expect(app.body).toMatchObject({ expire_access_tokens: false, verified: false });
    const { verifier, challenge } = await pkce();
    const back = await browser.withPage((page) =>
      authorizeInBrowser(page, authorizeUrl(app.body.client_id, 'connections:read', challenge), REDIRECT, owner, { workspaceId: owner.workspaceId }),
    );
    const tokens = await tokenRequest(
      { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: verifier },
      { id: app.body.client_id, secret: app.body.client_secret },
    );
    expect(tokens.status).toBe(200);
    expect(Object.keys(tokens.body).sort()).toEqual(['access_token', 'scope', 'token_type']);
    expect((await fetch(`${service.url}/v3/connections`, { headers: { authorization: `Bearer ${tokens.body.access_token}` } })).status).toBe(200);

    // "Changing the setting affects only new tokens."
    const patched = await fetch(`${service.url}/v3/oauth/clients/${app.body.client_id}`, {
      method: 'PATCH',
      headers: { apikey: owner.token, 'content-type': 'application/json' },
      body: JSON.stringify({ expire_access_tokens: true }),
    });
    expect((await patched.json()).expire_access_tokens).toBe(true);
    expect((await fetch(`${service.url}/v3/connections`, { headers: { authorization: `Bearer ${tokens.body.access_token}` } })).status).toBe(200);
  }, HOOK_TIMEOUT);

  test('a required scope is locked on the screen; dropping it anyway refuses the authorization', async () => {
    // Spec 5.3: "a client can be configured so that a scope's checkbox is locked and authorization is refused if it is dropped".
    const app = await createApp({ client_name: 'Needs connections', redirect_uris: [REDIRECT], required_scopes: ['connections:read'] });
    const { challenge } = await pkce();
    const url = authorizeUrl(app.body.client_id, 'connections:read webhooks:read', challenge);
    const refused = await browser.withPage(async (page) => {
      let landed: string | undefined;
      await page.route(`${REDIRECT}**`, (route) => {
        landed = route.request().url();
        return route.fulfill({ status: 200, body: 'back' });
      });
      await page.goto(url);
      await page.fill('#email', owner.email);
      await page.fill('#password', TEST_PASSWORD);
      await page.click('#sign-in');
      await page.waitForSelector('#approve');
      const box = page.locator('#scope-connections-read');
      expect(await box.isChecked()).toBe(true);
      expect(await box.isDisabled()).toBe(true);
      // A forged form: the locked scope's hidden input removed before approving.
      await page.evaluate(() => document.querySelectorAll('input[type=hidden][name=scope][value="connections:read"]').forEach((e) => e.remove()));
      await page.click('#approve');
      await page.waitForURL((u) => u.toString().startsWith(REDIRECT));
      return new URL(landed!);
    });
    expect(refused.searchParams.get('error')).toBe('access_denied');
    expect(refused.searchParams.get('state')).toBe('xyz');
    expect(refused.searchParams.get('iss')).toBe(issuer);
  }, HOOK_TIMEOUT);

  test('the consent screen shows the verified badge for a verified app and the warning for a self-registered one', async () => {
    const app = await createApp({ client_name: 'Verified partner', redirect_uris: [REDIRECT], client_uri: 'https://partner.example' });
    await setClientVerified(baseStores(service.runtime.ctx.db), app.body.client_id, true);
    const registered = await registerClient({ client_name: 'Totally Official Bank', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
    const { challenge } = await pkce();
    await browser.withPage(async (page) => {
      await page.goto(`${issuer}/signin`);
      await page.fill('#email', owner.email);
      await page.fill('#password', TEST_PASSWORD);
      await page.click('#sign-in');
      await page.waitForURL((url) => !url.pathname.startsWith('/signin'));

      await page.goto(authorizeUrl(app.body.client_id, 'profile', challenge));
      expect(await page.textContent('#client-name')).toContain('Verified partner');
      expect(await page.locator('#verified-badge').count()).toBe(1);
      expect(await page.locator('#self-registered-warning').count()).toBe(0);
      expect(await page.getAttribute('#client-site', 'href')).toBe('https://partner.example');

      await page.goto(authorizeUrl(registered.client_id, 'profile', challenge));
      expect(await page.textContent('#client-name')).toContain('Totally Official Bank');
      expect(await page.locator('#self-registered-warning').count()).toBe(1);
      expect(await page.locator('#verified-badge').count()).toBe(0);
      // Only workspaces where the person may authorize are offered, the personal account among them.
      expect(await page.locator(`#workspace-${owner.workspaceId}`).count()).toBe(1);
    });
  }, HOOK_TIMEOUT);
});

describe('prompt', () => {
  test('prompt=none with a standing approval answers a code without showing anything; without one, consent_required', async () => {
    const { verifier, challenge } = await pkce();
    const { page, close } = await browser.openPage();
    // The app's side: a real local page the browser lands on, recording what it was sent.
    const captured: string[] = [];
    const app = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (req) => {
      // Only the callback: Chromium also asks the app for /favicon.ico.
      if (new URL(req.url).pathname === '/callback') captured.push(req.url);
      return new Response('back at the app');
    } });
    const REDIRECT = `http://127.0.0.1:${app.port}/callback`;
    const client = await registerClient({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
    const authorizeUrl = (clientId: string, scope: string, challenge: string, extra: Record<string, string> = {}) =>
      authorizeUrlFor(REDIRECT, clientId, scope, challenge, extra);
    const tokenRequestTo = (body: Record<string, string>) => tokenRequest({ ...body, redirect_uri: REDIRECT });
    try {
      // Spec 7.4: consent_required — signed in, but nothing approved yet and no screen allowed.
      await page.goto(`${issuer}/signin`);
      await page.fill('#email', owner.email);
      await page.fill('#password', TEST_PASSWORD);
      await page.click('#sign-in');
      await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
      await page.goto(authorizeUrl(client.client_id, 'connections:read', challenge, { prompt: 'none' }));
      expect(new URL(captured.at(-1)!).searchParams.get('error')).toBe('consent_required');

      await page.goto(authorizeUrl(client.client_id, 'connections:read', challenge));
      await page.check(`#workspace-${owner.workspaceId}`);
      await page.click('#approve');
      await page.waitForURL((u) => u.toString().startsWith(REDIRECT));
      await page.goto(authorizeUrl(client.client_id, 'connections:read', challenge, { prompt: 'none' }));
      const silent = new URL(captured.at(-1)!);
      expect(silent.searchParams.get('error')).toBeNull();
      const tokens = await tokenRequestTo({ grant_type: 'authorization_code', code: silent.searchParams.get('code')!, code_verifier: verifier, client_id: client.client_id });
      expect(tokens).toMatchObject({ status: 200 });
      expect(tokens.body.scope).toBe('connections:read');

      // prompt=consent forces the screen even though the approval stands.
      await page.goto(authorizeUrl(client.client_id, 'connections:read', challenge, { prompt: 'consent' }));
      expect(await page.locator('#approve').count()).toBe(1);
    } finally {
      await close();
      app.stop(true);
    }
  }, HOOK_TIMEOUT);

  test('a person who is only an Agent there cannot authorize that workspace', async () => {
    const agent = await memberWithToken(service, owner, 'AGENT');
    await withPassword(service, agent.userId);
    const client = await registerClient({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
    const { challenge } = await pkce();
    await browser.withPage(async (page) => {
      await page.goto(authorizeUrl(client.client_id, 'profile', challenge));
      await page.fill('#email', agent.email);
      await page.fill('#password', TEST_PASSWORD);
      await page.click('#sign-in');
      await page.waitForSelector('#approve');
      // Spec 4.1: "the screen offers only workspaces where the person's role allows it".
      expect(await page.locator(`#workspace-${owner.workspaceId}`).count()).toBe(0);
    });
  }, HOOK_TIMEOUT);
});
