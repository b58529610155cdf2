import { beforeAll, describe, expect, test } from 'bun:test';
import { Elysia, t } from 'elysia';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpRoutes, mcpScopes, mcpTools } from '../../adapters/mcp/routes.ts';
import { runTool } from '../../adapters/mcp/server.ts';
import { defineTool } from '../../adapters/mcp/tool.ts';
import { sendMessageTool } from '../../adapters/mcp/tools/send-message.ts';
import type { Actor } from '../../core/identity/identity.ts';
import { DomainError } from '../../core/shared/errors.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { connectedConnection } from '../support/helpdesk.ts';
import { useMcpClients } from '../support/mcp-clients.ts';
import { messageSettled } from '../support/wait.ts';
import { HOOK_TIMEOUT, memberWithToken, UUID } from './helpers.ts';

/**
 * The MCP endpoint `/v3/mcp` (spec 1.7, 2.7, 5.3, 5.6, 7.5), driven by the SDK's own client over
 * Streamable HTTP against a running service on the sandbox network.
 */

let connectionId: string;

// The base endpoint alone: plugins add tools and scopes of their own (tested with each plugin).
const service = useTestService({ plugins: [] });
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  connectionId = await connectedConnection(service, owner.token, 'mcp');
}, HOOK_TIMEOUT);

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

const mcpClients = useMcpClients(service, 'switchboard-tests');

/** The SDK client on the running service, authenticated with an API key. */
const clientFor = mcpClients.withApiKey;

/** The SDK client on an app answering in process (`app.handle`), for custom authenticators. */
function clientOn(app: { handle(request: Request): Promise<Response> }): Promise<Client> {
  return mcpClients.over(new StreamableHTTPClientTransport(new URL('http://localhost/v3/mcp'), { fetch: (url, init) => app.handle(new Request(url, init)) }));
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A successful tool result: structured content, and the same data as JSON text. */
function ok(result: CallToolResult): any {
  if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result.content)}`);
  const json = result.content.filter((c) => c.type === 'text').at(-1);
  expect(json?.type === 'text' && JSON.parse(json.text)).toEqual(result.structuredContent as any);
  return result.structuredContent;
}

function failed(result: CallToolResult): { code: string; status: number; message: string } {
  expect(result.isError).toBe(true);
  const error = (result.structuredContent as any).error;
  const text = result.content[0];
  expect(text?.type === 'text' && text.text.startsWith(`${error.code}: `)).toBe(true);
  return error;
}

/** Polls the message over REST until it leaves PENDING (the driver send runs on the queue). */
const settled = (id: string, apikey = owner.token, timeoutMs = 20_000): Promise<any> => messageSettled(service, apikey, connectionId, id, { timeout: timeoutMs });

const newContact = () => `55119${Math.floor(10_000_000 + Math.random() * 89_999_999)}`;

const ownerActor = (scopes?: string[]): Actor => ({ userId: owner.userId, workspaceId: owner.workspaceId, roles: ['OWNER'], ...(scopes && { scopes }) });

/** A small app with the MCP routes and a fixed caller (the OAuth authenticator's stand-in). */
const appActingAs = (actor: Actor, plugins: Plugin[] = []) => new Elysia().use(mcpRoutes(service.runtime.ctx, plugins, async () => actor));

const rpc = (method: string, params: unknown, id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

function post(app: { handle(request: Request): Promise<Response> }, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return app.handle(
    new Request('http://localhost/v3/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
      body,
    }),
  );
}

const BASE_TOOLS = ['get_connection', 'list_chats', 'list_connections', 'list_messages', 'prepare_media_upload', 'send_message'];

// ------------------------------------------------------------------------------------------

describe('the endpoint: Streamable HTTP, stateless', () => {
  test('initialize: the SDK client connects and sees the server and its tools capability', async () => {
    const client = await clientFor(owner.token);
    expect(client.getServerVersion()?.name).toBe('switchboard');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain('list_connections');
  });

  test('tools/list: the six base tools, each with a description and an input schema', async () => {
    const { tools } = await (await clientFor(owner.token)).listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(BASE_TOOLS);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    const send = tools.find((t) => t.name === 'send_message')!;
    expect(Object.keys(send.inputSchema.properties!)).toEqual(expect.arrayContaining(['connectionId', 'to', 'text', 'image', 'location', 'template']));
    expect(send.inputSchema.required).toEqual(['connectionId', 'to']);
    expect(tools.find((t) => t.name === 'list_connections')!.annotations?.readOnlyHint).toBe(true);
  });

  test('any request stands alone: no session id is issued, and a fresh client on another request works', async () => {
    const res = await fetch(`${service.url}/v3/mcp`, {
      method: 'POST',
      headers: { apikey: owner.token, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect((await res.json()).result.serverInfo.name).toBe('switchboard');
    // tools/list without any initialize on this request: stateless servers answer it.
    const list = await fetch(`${service.url}/v3/mcp`, {
      method: 'POST',
      headers: { apikey: owner.token, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: rpc('tools/list', {}, 2),
    });
    expect(list.status).toBe(200);
    expect((await list.json()).result.tools).toHaveLength(BASE_TOOLS.length);
  });

  test('the OpenAPI document describes the endpoint', async () => {
    const doc = await service.call('GET', '/docs/json');
    expect(doc.status).toBe(200);
    // GET and DELETE answer 405 in stateless mode: not operations, so not documented.
    expect(Object.keys(doc.body.paths['/v3/mcp'])).toEqual(['post']);
    expect(doc.body.paths['/v3/mcp'].post.summary).toContain('MCP');
  });

  test('GET and DELETE answer 405 (no standalone stream, no sessions)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${service.url}/v3/mcp`, { method, headers: { apikey: owner.token, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect((await res.json()).error.message).toBe('Method not allowed.');
    }
  });

  test('the body reaches the transport untouched: bad JSON is a JSON-RPC parse error, not the REST error shape', async () => {
    const res = await fetch(`${service.url}/v3/mcp`, {
      method: 'POST',
      headers: { apikey: owner.token, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc": "2.0", ',
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.jsonrpc).toBe('2.0');
    expect(body.error.code).toBe(-32700);
  });

  test('without a credential, or with a wrong one: 401 with WWW-Authenticate naming the MCP resource metadata', async () => {
    const metadata = `resource_metadata="${service.runtime.ctx.config.publicUrl}/.well-known/oauth-protected-resource/v3/mcp"`;
    for (const headers of [{}, { apikey: 'sk_live_not-a-key' }] as Record<string, string>[]) {
      const res = await fetch(`${service.url}/v3/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: rpc('tools/list', {}),
      });
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).toStartWith('Bearer realm="switchboard"');
      expect(challenge).toContain(metadata);
    }
  });

  test('whatever the authenticator, its 401 carries the challenge and its other failures their own answer', async () => {
    const refusing = (error: Error) => new Elysia().use(mcpRoutes(service.runtime.ctx, [], async () => Promise.reject(error)));
    const unauthorized = await post(refusing(new DomainError('unauthenticated', 'The token has expired')), rpc('tools/list', {}));
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('www-authenticate')).toBe(
      `Bearer realm="switchboard", error="invalid_token", error_description="no valid API key or access token was sent", scope="connections:read messages:read messages:send", resource_metadata="${service.runtime.ctx.config.publicUrl}/.well-known/oauth-protected-resource/v3/mcp"`,
    );
    const forbidden = await post(refusing(new DomainError('forbidden', 'You are not a member of the workspace named in X-Account-Id')), rpc('tools/list', {}));
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('www-authenticate')).toBeNull();
    expect((await forbidden.json()).message).toBe('You are not a member of the workspace named in X-Account-Id');
  });
});

describe('connections:read tools', () => {
  test('list_connections: id, name, driver and status of each connection', async () => {
    const data = ok(await call(await clientFor(owner.token), 'list_connections'));
    expect(data.connections).toContainEqual(expect.objectContaining({ id: connectionId, name: 'mcp', driver: 'sandbox', status: 'CONNECTED' }));
    // Never credentials or pairing codes.
    for (const c of data.connections) expect(Object.keys(c).sort()).toEqual(['driver', 'id', 'name', 'official', 'phoneNumber', 'status']);
  });

  test('get_connection: one connection with its status and capabilities', async () => {
    const data = ok(await call(await clientFor(owner.token), 'get_connection', { connectionId }));
    expect(data).toMatchObject({ id: connectionId, driver: 'sandbox', status: 'CONNECTED', official: false, capabilities: { templates: false } });
  });

  test('an unknown connection is a tool error CONNECTION_NOT_FOUND, not a transport failure', async () => {
    const client = await clientFor(owner.token);
    const unknown = crypto.randomUUID();
    for (const [tool, args] of [
      ['get_connection', { connectionId: unknown }],
      ['send_message', { connectionId: unknown, to: '+5511988880000', text: 'hi' }],
      ['list_chats', { connectionId: unknown }],
    ] as const) {
      const error = failed(await call(client, tool, args));
      expect(error).toMatchObject({ code: 'CONNECTION_NOT_FOUND', status: 404 });
      expect(error.message).toContain(unknown);
    }
  });
});

describe('send_message (messages:send): the REST send use case', () => {
  test('a sandbox text message: accepted PENDING, then SENT, in the REST history, one credit used', async () => {
    const client = await clientFor(owner.token);
    const contact = newContact();
    const before = (await service.call('GET', '/v3/summary', { apikey: owner.token })).body.messages;
    const data = ok(await call(client, 'send_message', { connectionId, to: `+${contact}`, text: 'Hello from the assistant' }));
    expect(data.messageId).toMatch(UUID);
    expect(data).toMatchObject({ status: 'PENDING', kind: 'text', created: true, remoteJid: `${contact}@s.whatsapp.net` });

    expect((await settled(data.messageId)).status).toBe('SENT');
    const history = await service.call('GET', `/v3/connections/${connectionId}/chats/messages?chat=${contact}`, { apikey: owner.token });
    expect(history.body).toEqual([expect.objectContaining({ id: data.messageId, direction: 'outbound', status: 'SENT', content: { kind: 'text', text: 'Hello from the assistant' } })]);
    const after = (await service.call('GET', '/v3/summary', { apikey: owner.token })).body.messages;
    expect(after.consumed).toBe(before.consumed + 1);
  });

  test('a location, and an idempotency key that answers the first message on a retry', async () => {
    const client = await clientFor(owner.token);
    const contact = newContact();
    const args = { connectionId, to: contact, location: { latitude: -23.55, longitude: -46.63, name: 'Sé' }, idempotencyKey: `k-${crypto.randomUUID()}` };
    const first = ok(await call(client, 'send_message', args));
    const second = ok(await call(client, 'send_message', args));
    expect(second.messageId).toBe(first.messageId);
    expect(second.created).toBe(false);
    expect((await settled(first.messageId)).content.location).toMatchObject({ latitude: -23.55, longitude: -46.63 });
  });

  test('the use case’s own rules come back as tool errors: no content, two contents, a template on the sandbox', async () => {
    const client = await clientFor(owner.token);
    expect(failed(await call(client, 'send_message', { connectionId, to: '+5511988880001' }))).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(failed(await call(client, 'send_message', { connectionId, to: '+5511988880001', text: 'a', location: { latitude: 1, longitude: 2 } }))).toMatchObject({
      code: 'BAD_REQUEST',
    });
    expect(failed(await call(client, 'send_message', { connectionId, to: '+5511988880001', template: { name: 'hello', language: 'en_US' } }))).toMatchObject({
      code: 'UNPROCESSABLE_ENTITY',
      status: 422,
    });
    // Arguments the schema refuses are tool errors too (the SDK validates before the tool runs).
    const wrongType = await call(client, 'send_message', { connectionId, to: 5511988880001 });
    expect(wrongType.isError).toBe(true);
  });
});

describe('prepare_media_upload (spec 5.6): a signed single-use upload URL, 10 minutes', () => {
  const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));

  test('prepare, upload the bytes with a plain POST (no API key): the image is sent; its mediaId sends it again', async () => {
    const client = await clientFor(owner.token);
    const contact = newContact();
    const data = ok(await call(client, 'prepare_media_upload', { connectionId, to: `+${contact}`, kind: 'image', caption: 'a pixel' }));
    expect(data.uploadUrl).toStartWith(`${service.runtime.ctx.config.publicUrl}/v3/connections/media/uploads/`);
    expect(data.method).toBe('POST');
    const minutesLeft = (Date.parse(data.expiresAt) - Date.now()) / 60_000;
    expect(minutesLeft).toBeGreaterThan(9);
    expect(minutesLeft).toBeLessThanOrEqual(10);

    const upload = await fetch(data.uploadUrl, { method: 'POST', headers: { 'content-type': 'image/png' }, body: PNG });
    expect(upload.status).toBe(201);
    const uploaded = await upload.json();
    expect(uploaded.mediaId).toMatch(UUID);
    expect(uploaded.message).toMatchObject({ kind: 'image', remoteJid: `${contact}@s.whatsapp.net` });
    const sent = await settled(uploaded.message.id);
    expect(sent.status).toBe('SENT');
    expect(sent.content.image).toMatchObject({ mediaId: uploaded.mediaId, caption: 'a pixel' });

    // Single use.
    expect((await fetch(data.uploadUrl, { method: 'POST', headers: { 'content-type': 'image/png' }, body: PNG })).status).toBe(409);

    // The uploaded media goes out again by mediaId through send_message.
    const again = ok(await call(client, 'send_message', { connectionId, to: newContact(), image: { mediaId: uploaded.mediaId } }));
    expect((await settled(again.messageId)).status).toBe('SENT');
  });

  test('a kind that is not media is refused by the input schema; an unknown connection is CONNECTION_NOT_FOUND', async () => {
    const client = await clientFor(owner.token);
    expect((await call(client, 'prepare_media_upload', { connectionId, to: '+5511988880002', kind: 'location' })).isError).toBe(true);
    expect(failed(await call(client, 'prepare_media_upload', { connectionId: crypto.randomUUID(), to: '+5511988880002', kind: 'image' })).code).toBe('CONNECTION_NOT_FOUND');
  });
});

describe('messages:read tools: list_chats and list_messages', () => {
  const contact = newContact();

  beforeAll(async () => {
    const injected = await service.call('POST', `/v3/connections/${connectionId}/sandbox/messages`, {
      apikey: owner.token,
      body: { from: `+${contact}`, pushName: 'Dora', text: 'Is my order on its way?' },
    });
    expect(injected.status).toBe(201);
  }, HOOK_TIMEOUT);

  test('list_chats: the contact who wrote is there, with their name', async () => {
    const data = ok(await call(await clientFor(owner.token), 'list_chats', { connectionId, search: contact }));
    expect(data.total).toBe(1);
    expect(data.chats).toEqual([expect.objectContaining({ remoteJid: `${contact}@s.whatsapp.net`, name: 'Dora' })]);
    expect(data.chats[0].lastContactMessageAt).not.toBeNull();
  });

  test('list_messages: the incoming message, then our reply, oldest first', async () => {
    const client = await clientFor(owner.token);
    const reply = ok(await call(client, 'send_message', { connectionId, to: contact, text: 'Yes, tomorrow.' }));
    const data = ok(await call(client, 'list_messages', { connectionId, chat: `${contact}@s.whatsapp.net` }));
    expect(data.messages.map((m: any) => m.direction)).toEqual(['inbound', 'outbound']);
    expect(data.messages[0].content.message).toEqual({ conversation: 'Is my order on its way?' });
    expect(data.messages[1].id).toBe(reply.messageId);
    expect(data.nextCursor).toBeNull();

    const page = ok(await call(client, 'list_messages', { connectionId, chat: contact, limit: 1 }));
    expect(page.messages.map((m: any) => m.id)).toEqual([reply.messageId]);
    expect(page.nextCursor).toBe(reply.messageId);
    const older = ok(await call(client, 'list_messages', { connectionId, chat: contact, limit: 1, cursor: page.nextCursor }));
    expect(older.messages[0].direction).toBe('inbound');
  });

  test('the roles matrix applies: a Manager’s key gets an error result from list_messages and list_chats (2.14)', async () => {
    const manager = await memberWithToken(service, owner, 'MANAGER');
    const client = await clientFor(manager.token);
    for (const tool of ['list_messages', 'list_chats']) {
      const error = failed(await call(client, tool, { connectionId, chat: contact }));
      expect(error).toMatchObject({ code: 'FORBIDDEN', status: 403, message: 'Insufficient account permissions' });
    }
    // What a Manager may do still works: reading connections.
    expect(ok(await call(client, 'list_connections')).connections.map((c: any) => c.id)).toContain(connectionId);
  });
});

describe('OAuth scopes (spec 2.7, 5.3, 7.5): the scope challenge', () => {
  test('a token with connections:read lists connections but send_message is 403 insufficient_scope naming messages:send', async () => {
    const app = appActingAs(ownerActor(['connections:read']));
    const client = await clientOn(app);
    expect(ok(await call(client, 'list_connections')).connections.map((c: any) => c.id)).toContain(connectionId);

    const before = await service.runtime.ctx.db.selectFrom('messages').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const res = await post(app, rpc('tools/call', { name: 'send_message', arguments: { connectionId, to: '+5511988880003', text: 'no' } }));
    expect(res.status).toBe(403);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toStartWith('Bearer realm="switchboard", error="insufficient_scope", error_description="');
    // The scope asked for: what the caller holds here plus the missing one (no scope lost on step-up).
    expect(challenge).toContain('scope="connections:read messages:send"');
    expect(challenge).toContain(`resource_metadata="${service.runtime.ctx.config.publicUrl}/.well-known/oauth-protected-resource/v3/mcp"`);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
    expect(body.error).toBe('insufficient_scope');
    expect(body.error_description).toContain('messages:send');
    // Nothing was sent.
    const after = await service.runtime.ctx.db.selectFrom('messages').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);

    // The SDK client sees the 403 as an HTTP error (with no auth provider it cannot step up).
    const thrown = await call(client, 'send_message', { connectionId, to: '+5511988880003', text: 'no' }).catch((e) => e);
    expect(thrown).toBeInstanceOf(StreamableHTTPError);
    expect((thrown as StreamableHTTPError).code).toBe(403);
  });

  test('each tool is checked against its own scope; implied scopes count (connections:write covers connections:read)', async () => {
    const write = appActingAs(ownerActor(['connections:write']));
    expect((await post(write, rpc('tools/call', { name: 'get_connection', arguments: { connectionId } }))).status).toBe(200);
    const challenged = await post(write, rpc('tools/call', { name: 'list_messages', arguments: { connectionId, chat: '5511988880003' } }));
    expect(challenged.status).toBe(403);
    expect(challenged.headers.get('www-authenticate')).toContain('scope="connections:write messages:read"');

    const send = appActingAs(ownerActor(['messages:send']));
    expect((await post(send, rpc('tools/call', { name: 'list_connections', arguments: {} }))).headers.get('www-authenticate')).toContain('scope="connections:read messages:send"');
    const res = await post(send, rpc('tools/call', { name: 'prepare_media_upload', arguments: { connectionId, to: '+5511988880003', kind: 'image' } }));
    expect(res.status).toBe(200);
    expect((await res.json()).result.structuredContent.uploadUrl).toContain('/v3/connections/media/uploads/');
  });

  test('listing tools, and API keys (no scopes), need no scope', async () => {
    const none = appActingAs(ownerActor([]));
    const list = await post(none, rpc('tools/list', {}));
    expect(list.status).toBe(200);
    expect((await list.json()).result.tools).toHaveLength(BASE_TOOLS.length);
    const apiKey = appActingAs(ownerActor());
    expect((await post(apiKey, rpc('tools/call', { name: 'list_messages', arguments: { connectionId, chat: '5511988880003' } }))).status).toBe(200);
  });

  test('defence in depth: a tool run with a scoped actor that lacks the scope is an error result', async () => {
    const result = await runTool(sendMessageTool, { connectionId, to: '+5511988880004', text: 'no' }, { actor: ownerActor(['connections:read']), ctx: service.runtime.ctx });
    expect(failed(result)).toMatchObject({ code: 'insufficient_scope', status: 403 });
  });
});

describe('plugins add tools by exporting them', () => {
  const echo = defineTool({
    name: 'demo_echo',
    description: 'Echoes its text back (a plugin tool for the tests).',
    scopes: ['helpdesk:read'],
    input: t.Object({ text: t.String({ description: 'Anything' }) }),
    async run({ text }, { actor }) {
      return { structured: { echo: text, workspaceId: actor.workspaceId } };
    },
  });
  const demo: Plugin = { name: 'demo', mcpTools: [echo] };

  test('an enabled plugin’s tools are offered and run as the caller; without the plugin they are not', async () => {
    const withPlugin = await clientOn(appActingAs(ownerActor(), [demo]));
    expect((await withPlugin.listTools()).tools.map((t) => t.name)).toContain('demo_echo');
    expect(ok(await call(withPlugin, 'demo_echo', { text: 'hi' }))).toEqual({ echo: 'hi', workspaceId: owner.workspaceId });

    const without = await clientOn(appActingAs(ownerActor(), []));
    expect((await without.listTools()).tools.map((t) => t.name)).not.toContain('demo_echo');
    expect((await call(without, 'demo_echo', { text: 'hi' })).isError).toBe(true);
  });

  test('mcpScopes: the union of the offered tools’ scopes, in spec order; a plugin’s scopes join it', () => {
    expect(mcpScopes([])).toEqual(['connections:read', 'messages:read', 'messages:send']);
    expect(mcpScopes([demo])).toEqual(['connections:read', 'messages:read', 'messages:send', 'helpdesk:read']);
  });

  test('two tools with one name stop the boot', () => {
    const clash: Plugin = { name: 'clash', mcpTools: [{ ...echo, name: 'send_message' }] };
    expect(() => mcpTools([clash])).toThrow(/send_message/);
  });
});
