import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { BrowserOAuthProvider, recordingFetch, type WireEntry } from '../support/mcp-oauth-provider.ts';
import { challengeParams, ownerWithPassword } from '../support/oauth.ts';
import { useTestService } from '../support/service.ts';
import { messageSettled } from '../support/wait.ts';
import { HOOK_TIMEOUT, UUID } from './helpers.ts';

/**
 * Issue 5 "Done when": an MCP client, starting from nothing but the MCP URL, registers itself,
 * a person consents in the browser page, and the client sends a sandbox message through an MCP
 * tool. The client is the real MCP TypeScript SDK (`Client` + `StreamableHTTPClientTransport`
 * with an `OAuthClientProvider`); the person approves in real Chromium (spec 1.7, 4.1, 5.3, 7.5).
 */

let browser: TestBrowser;
let owner: { userId: string; workspaceId: string; token: string; email: string };
let connectionId: string;
let publicUrl: string;
let mcpUrl: string;
const clients: Client[] = [];

const ALL_MCP_SCOPES = 'connections:read messages:read messages:send';
const BASE_TOOLS = ['get_connection', 'list_chats', 'list_connections', 'list_messages', 'prepare_media_upload', 'send_message'];

// The base endpoint alone: plugins add tools and scopes of their own (tested with each plugin).
const service = useTestService({ plugins: [] });

beforeAll(async () => {
  browser = await startBrowser();
  owner = await ownerWithPassword(service, 'mcp-oauth', 'Acme');
  const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'assistant line' } });
  expect(created.status).toBe(201);
  connectionId = created.body.id;
  const connected = await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey: owner.token });
  expect(connected.body.status).toBe('CONNECTED');
  publicUrl = service.runtime.ctx.config.publicUrl;
  mcpUrl = `${publicUrl}/v3/mcp`;
}, HOOK_TIMEOUT);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await browser?.close();
}, HOOK_TIMEOUT);

// ------------------------------------------------------------------------------------------

const transportFor = (provider: BrowserOAuthProvider, wire: WireEntry[]) =>
  new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: recordingFetch(wire) });

function newClient(): Client {
  const client = new Client({ name: 'mcp-oauth-tests', version: '1.0.0' });
  clients.push(client);
  return client;
}

/**
 * The SDK's dance: connect → 401 → discovery, registration, authorize in the browser →
 * UnauthorizedError; finishAuth(code); connect again with a new transport and the same provider.
 */
async function authorizedClient(provider: BrowserOAuthProvider, wire: WireEntry[]): Promise<Client> {
  const first = transportFor(provider, wire);
  const thrown = await newClient()
    .connect(first)
    .catch((e) => e);
  expect(thrown).toBeInstanceOf(UnauthorizedError);
  await first.finishAuth(provider.code);
  const client = newClient();
  await client.connect(transportFor(provider, wire));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function ok(result: CallToolResult): any {
  if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

/** Polls the message over REST (API key) until it leaves PENDING (the driver send runs on the queue). */
const settled = (id: string, timeoutMs = 20_000): Promise<any> => messageSettled(service, owner.token, connectionId, id, { timeout: timeoutMs });

const newContact = () => `55119${Math.floor(10_000_000 + Math.random() * 89_999_999)}`;

const form = (entry: WireEntry | undefined) => new URLSearchParams(entry?.body ?? '');

// ------------------------------------------------------------------------------------------

describe('from nothing but the MCP URL to a sent message', () => {
  const wire: WireEntry[] = [];
  let provider: BrowserOAuthProvider;
  let client: Client;

  test('connect: 401 → protected-resource discovery → AS metadata → registration → consent in Chromium', async () => {
    provider = new BrowserOAuthProvider(browser, owner, { workspaceId: owner.workspaceId });
    const first = transportFor(provider, wire);
    const thrown = await newClient()
      .connect(first)
      .catch((e) => e);
    // The SDK has sent the person to the authorize page and now waits for the code.
    expect(thrown).toBeInstanceOf(UnauthorizedError);

    // The first request carried no credential; the 401 names the MCP endpoint's own protected-resource document (RFC 9728).
    const [initialize, prm, asMetadata, register] = wire;
    expect(initialize).toMatchObject({ method: 'POST', url: mcpUrl, authorization: undefined, status: 401 });
    // Spec 7.5: invalid_token for a missing token too, and the scopes the tools use (issue 20 item 14).
    expect(challengeParams(initialize!.wwwAuthenticate)).toEqual({
      realm: 'switchboard',
      error: 'invalid_token',
      error_description: expect.any(String),
      scope: ALL_MCP_SCOPES,
      resource_metadata: `${publicUrl}/.well-known/oauth-protected-resource/v3/mcp`,
    });
    // Spec 4.1: "GET /.well-known/oauth-protected-resource/v3/mcp | the MCP endpoint and only the scopes it uses"
    expect(prm).toMatchObject({ method: 'GET', url: `${publicUrl}/.well-known/oauth-protected-resource/v3/mcp`, status: 200 });
    expect(asMetadata).toMatchObject({ method: 'GET', url: `${publicUrl}/.well-known/oauth-authorization-server`, status: 200 });
    // Spec 4.1: "POST /v3/oauth/register | none (open)"; the SDK asks for the scopes the resource document lists.
    expect(register).toMatchObject({ method: 'POST', url: `${publicUrl}/v3/oauth/register`, status: 201 });
    expect(JSON.parse(register!.body!)).toMatchObject({ token_endpoint_auth_method: 'none', scope: ALL_MCP_SCOPES, redirect_uris: [provider.redirectUrl] });
    expect(wire).toHaveLength(4);

    // A public client: an id, no secret (spec 2.5).
    const info = provider.clientInformation()!;
    expect(info.client_id).toMatch(UUID);
    expect(info.client_secret).toBeUndefined();

    // Spec 4.1 authorize parameters: PKCE S256 always, the resource the token is for (5.3), the scopes.
    expect(provider.authorizeUrls).toHaveLength(1);
    const authorize = provider.authorizeUrls[0]!;
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${publicUrl}/v3/oauth/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: info.client_id,
      code_challenge_method: 'S256',
      redirect_uri: provider.redirectUrl,
      scope: ALL_MCP_SCOPES,
      resource: mcpUrl,
    });
    // Spec 4.1: "After consent the browser is redirected to redirect_uri with query code, state, iss."
    const back = provider.callbacks[0]!;
    expect(back.searchParams.get('iss')).toBe(publicUrl);
    expect(provider.code).toBeString(); // state checked inside

    // finishAuth: the code is exchanged with the verifier and the resource, and no secret.
    await first.finishAuth(provider.code);
    const exchange = wire.at(-1);
    expect(exchange).toMatchObject({ method: 'POST', url: `${publicUrl}/v3/oauth/token`, status: 200 });
    const params = form(exchange);
    expect(params.get('grant_type')).toBe('authorization_code');
    expect(params.get('resource')).toBe(mcpUrl);
    expect(params.get('client_id')).toBe(info.client_id);
    expect(params.get('code_verifier')).toBeString();
    expect(params.has('client_secret')).toBe(false);
  }, HOOK_TIMEOUT);

  test('the token: Bearer, 1 hour, a refresh token, and the approved scopes (spec 2.6)', () => {
    const tokens = provider.tokens()!;
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeString();
    expect(tokens.scope).toBe(ALL_MCP_SCOPES);
  });

  test('the consent is listed (API key) with the approved scopes', async () => {
    const consents = await service.call('GET', '/v3/oauth/consents', { apikey: owner.token });
    expect(consents.status).toBe(200);
    const mine = consents.body.data.find((c: { clientId: string }) => c.clientId === provider.clientInformation()!.client_id);
    expect(mine).toMatchObject({ clientName: 'MCP test assistant', userEmail: owner.email, verified: false });
    expect([...mine.scopes].sort()).toEqual(ALL_MCP_SCOPES.split(' '));
  });

  test('connect again with the same provider: the bearer token is sent and the tools are listed', async () => {
    client = newClient();
    const from = wire.length;
    await client.connect(transportFor(provider, wire));
    const initialize = wire[from]!;
    expect(initialize).toMatchObject({ method: 'POST', url: mcpUrl, status: 200, authorization: `Bearer ${provider.tokens()!.access_token}` });
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(BASE_TOOLS);
  });

  test('list_connections sees the sandbox connection of the workspace chosen on the consent page', async () => {
    const data = ok(await call(client, 'list_connections'));
    expect(data.connections).toContainEqual(expect.objectContaining({ id: connectionId, name: 'assistant line', driver: 'sandbox', status: 'CONNECTED' }));
  });

  test('send_message: the message exists and reaches SENT in the REST history', async () => {
    const contact = newContact();
    const data = ok(await call(client, 'send_message', { connectionId, to: `+${contact}`, text: 'Hello from an OAuth MCP client' }));
    expect(data.messageId).toMatch(UUID);
    expect(data).toMatchObject({ status: 'PENDING', kind: 'text', created: true, remoteJid: `${contact}@s.whatsapp.net` });

    expect((await settled(data.messageId)).status).toBe('SENT');
    const history = await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${contact}`, { apikey: owner.token });
    expect(history.status).toBe(200);
    expect(history.body).toEqual([
      expect.objectContaining({ id: data.messageId, direction: 'outbound', status: 'SENT', content: { kind: 'text', text: 'Hello from an OAuth MCP client' } }),
    ]);
  });

  test('the token is bound to the MCP resource: the REST API answers it 401 invalid_token (spec 5.3, 7.5)', async () => {
    const token = provider.tokens()!.access_token;
    const res = await fetch(`${service.url}/v3/connections`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`resource_metadata="${publicUrl}/.well-known/oauth-protected-resource"`);
    // …while the MCP endpoint still takes it.
    expect(ok(await call(client, 'list_connections')).connections.map((c: any) => c.id)).toContain(connectionId);
  });

  test('a rejected access token: the SDK refreshes (rotation, same resource) and the call goes through', async () => {
    const before = provider.tokens()!;
    provider.saveTokens({ ...before, access_token: 'sbat_not-a-token' });
    const from = wire.length;
    expect(ok(await call(client, 'list_connections')).connections.map((c: any) => c.id)).toContain(connectionId);

    const seen = wire.slice(from);
    expect(seen[0]).toMatchObject({ url: mcpUrl, status: 401 });
    expect(seen[0]!.wwwAuthenticate).toContain('error="invalid_token"');
    const refresh = seen.find((w) => w.url === `${publicUrl}/v3/oauth/token`);
    expect(refresh?.status).toBe(200);
    expect(form(refresh).get('grant_type')).toBe('refresh_token');
    expect(form(refresh).get('refresh_token')).toBe(before.refresh_token!);
    expect(form(refresh).get('resource')).toBe(mcpUrl);
    expect(seen.at(-1)).toMatchObject({ url: mcpUrl, status: 200 });

    const after = provider.tokens()!;
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.scope).toBe(ALL_MCP_SCOPES);
    expect((await fetch(`${service.url}/v3/connections`, { headers: { authorization: `Bearer ${after.access_token}` } })).status).toBe(401);
    // No second trip to the browser.
    expect(provider.authorizeUrls).toHaveLength(1);
  });
});

describe('step-up with a refresh token: a client the person allowed only connections:read', () => {
  const wire: WireEntry[] = [];
  let provider: BrowserOAuthProvider;
  let client: Client;

  test('the person unchecks the message scopes; the token carries connections:read alone', async () => {
    provider = new BrowserOAuthProvider(browser, owner, { workspaceId: owner.workspaceId, uncheck: ['messages:read', 'messages:send'] });
    client = await authorizedClient(provider, wire);
    // The SDK asked for all three; spec 2.6: "scope is the approved set and is authoritative".
    expect(provider.authorizeUrls[0]!.searchParams.get('scope')).toBe(ALL_MCP_SCOPES);
    expect(provider.tokens()!.scope).toBe('connections:read');
    expect(ok(await call(client, 'list_connections')).connections.map((c: any) => c.id)).toContain(connectionId);
  }, HOOK_TIMEOUT);

  test('send_message: 403 scope challenge naming messages:send → the refresh is refused once → the SDK asks the person for the wider scope', async () => {
    const contact = newContact();
    const from = wire.length;
    const narrowRefreshToken = provider.tokens()!.refresh_token!;
    let consentPage: { stepUp: string; granted: string[]; checked: string[]; workspace: string } | undefined;
    provider.choice = {
      workspaceId: owner.workspaceId,
      onConsentPage: async (page) => {
        consentPage = {
          stepUp: await page.locator('#step-up').innerText(),
          granted: await page.locator('[id$="-granted"]').evaluateAll((els) => els.map((e) => e.id)),
          checked: await page.locator('input[name="scope"]:checked').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)),
          workspace: await page.locator('input[name="workspace_id"]:checked').evaluate((e) => (e as HTMLInputElement).value),
        };
        await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? '/tmp'}/consent-step-up.png`, fullPage: true });
      },
    };
    const thrown = await call(client, 'send_message', { connectionId, to: `+${contact}`, text: 'after step-up' }).catch((e) => e);

    // The challenge (spec 7.5): 403, insufficient_scope, the missing scope, the MCP resource document.
    const challenged = wire.slice(from).filter((w) => w.url === mcpUrl && w.method === 'POST');
    expect(challenged).toHaveLength(1);
    expect(challenged[0]!.status).toBe(403);
    const params = challengeParams(challenged[0]!.wwwAuthenticate);
    expect(params).toMatchObject({ realm: 'switchboard', error: 'insufficient_scope', resource_metadata: `${publicUrl}/.well-known/oauth-protected-resource/v3/mcp` });
    expect(params.error_description).toContain('messages:send');
    expect(params.scope!.split(' ')).toEqual(['connections:read', 'messages:send']);

    // The SDK (1.32.x) tries a refresh first; a refresh cannot widen a grant (spec 7.3), so instead of
    // renewing connections:read alone the server refuses it once with invalid_grant naming the scope…
    const refresh = wire.slice(from).find((w) => w.url === `${publicUrl}/v3/oauth/token`);
    expect(form(refresh).get('grant_type')).toBe('refresh_token');
    expect(refresh!.status).toBe(400);
    expect(provider.invalidated).toEqual(['tokens']);
    // …and the SDK sends the person to the authorize endpoint for the challenged scopes (SDK: UnauthorizedError until finishAuth).
    expect(thrown).toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizeUrls).toHaveLength(2);
    const stepUp = provider.authorizeUrls[1]!;
    expect(stepUp.searchParams.get('scope')).toBe('connections:read messages:send');
    expect(stepUp.searchParams.get('resource')).toBe(mcpUrl);

    // The consent screen marks what the app already holds and names what it adds, in the workspace it holds it in.
    expect(consentPage).toBeDefined();
    expect(consentPage!.stepUp).toContain('already has access to Acme');
    expect(consentPage!.stepUp).toContain('messages:send');
    expect(consentPage!.stepUp).not.toContain('connections:read');
    expect(consentPage!.granted).toEqual(['scope-connections-read-granted']);
    expect(consentPage!.checked).toEqual(['connections:read', 'messages:send']);
    expect(consentPage!.workspace).toBe(owner.workspaceId);

    // The refused refresh token was not spent: a client that kept it still renews its narrower access.
    const renewed = await fetch(`${publicUrl}/v3/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: narrowRefreshToken, client_id: provider.clientInformation()!.client_id, resource: mcpUrl }),
    });
    expect(renewed.status).toBe(200);
    expect((await renewed.json()).scope).toBe('connections:read');

    // Nothing reached the chat.
    const history = await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${contact}`, { apikey: owner.token });
    expect(history.status).toBe(200);
    expect(history.body).toEqual([]);

    // finishAuth: the new grant carries both scopes; the message goes out on a new connection.
    const transport = transportFor(provider, wire);
    await transport.finishAuth(provider.code);
    expect(provider.tokens()!.scope).toBe('connections:read messages:send');
    client = newClient();
    await client.connect(transport);
    const data = ok(await call(client, 'send_message', { connectionId, to: `+${contact}`, text: 'after step-up' }));
    expect((await settled(data.messageId)).status).toBe('SENT');
  }, HOOK_TIMEOUT);

  test('after the step-up a refresh keeps the wider scope, and the consent holds both', async () => {
    const before = provider.tokens()!;
    provider.saveTokens({ ...before, access_token: 'sbat_not-a-token' });
    expect(ok(await call(client, 'list_connections')).connections.map((c: any) => c.id)).toContain(connectionId);
    expect(provider.tokens()!.refresh_token).not.toBe(before.refresh_token);
    expect(provider.tokens()!.scope).toBe('connections:read messages:send');
    expect(provider.authorizeUrls).toHaveLength(2);
    const consents = await service.call('GET', '/v3/oauth/consents', { apikey: owner.token });
    const mine = consents.body.data.find((c: { clientId: string }) => c.clientId === provider.clientInformation()!.client_id);
    expect([...mine.scopes].sort()).toEqual(['connections:read', 'messages:send']);
  }, HOOK_TIMEOUT);
});

describe('step-up: a client without refresh tokens is sent back to the consent page', () => {
  const wire: WireEntry[] = [];
  let provider: BrowserOAuthProvider;
  let stepped: Client;

  test('send_message with connections:read → the SDK starts a new authorization for messages:send; after it the message goes out', async () => {
    provider = new BrowserOAuthProvider(browser, owner, { workspaceId: owner.workspaceId, uncheck: ['messages:read', 'messages:send'] }, { grant_types: ['authorization_code'] });
    const client = await authorizedClient(provider, wire);
    expect(provider.tokens()).toMatchObject({ scope: 'connections:read' });
    expect(provider.tokens()!.refresh_token).toBeUndefined();

    // This time the person approves what is asked.
    provider.choice = { workspaceId: owner.workspaceId };
    const contact = newContact();
    const args = { connectionId, to: `+${contact}`, text: 'after step-up' };
    const thrown = await call(client, 'send_message', args).catch((e) => e);
    expect(thrown).toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizeUrls).toHaveLength(2);
    const stepUp = provider.authorizeUrls[1]!;
    expect(stepUp.searchParams.get('scope')).toContain('messages:send');
    expect(stepUp.searchParams.get('resource')).toBe(mcpUrl);

    const transport = transportFor(provider, wire);
    await transport.finishAuth(provider.code);
    expect(provider.tokens()!.scope).toContain('messages:send');
    stepped = newClient();
    await stepped.connect(transport);
    const data = ok(await call(stepped, 'send_message', args));
    expect((await settled(data.messageId)).status).toBe('SENT');
  }, HOOK_TIMEOUT);

  // The SDK requests exactly the challenge's scope; the challenge carries the scopes already granted
  // plus the missing one (MCP 2025-11-25 "Scope Challenge Handling"), so nothing is lost.
  test('after step-up the client still has connections:read', async () => {
    expect(provider.tokens()!.scope!.split(' ')).toContain('connections:read');
    expect(ok(await call(stepped, 'list_connections')).connections.map((c: any) => c.id)).toContain(connectionId);
  });
});
