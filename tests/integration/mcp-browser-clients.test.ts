import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { loadConfig } from '../../apps/config.ts';
import { useTestService } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 20 items 12 and 16 (second half), black-box: browser-based MCP clients (MCP Inspector in
 * direct mode failed with "Failed to fetch") get CORS on the discovery documents, the OAuth
 * endpoints they call and `/v3/mcp`; the MCP endpoint checks `Origin` as the Streamable HTTP
 * transport requires ("Servers MUST validate the Origin header on all incoming connections to
 * prevent DNS rebinding attacks. If the Origin header is present and invalid, servers MUST
 * respond with HTTP 403 Forbidden"); and the server advertises `tools.listChanged` only if it
 * sends `notifications/tools/list_changed` (it never does: stateless, fixed tool list).
 *
 * Spec 4.1 lists the endpoints: "POST /v3/oauth/register | none (open)", "POST /v3/oauth/token |
 * client auth", "POST /v3/oauth/revoke | the client", and the three discovery documents.
 */

let browser: TestBrowser;
let owner: { token: string };
let page: ReturnType<typeof Bun.serve>;
let publicUrl: string;
const clients: Client[] = [];

const INSPECTOR = 'http://localhost:6274';
const STRANGER = 'https://evil.example';
const MCP_HEADERS = ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];

const service = useTestService({ plugins: [] });

beforeAll(async () => {
  browser = await startBrowser();
  owner = await service.bootstrap();
  publicUrl = service.runtime.ctx.config.publicUrl;
  // The "web app" of a browser-based MCP client: another origin (another port) on this machine.
  page = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<!doctype html><title>client</title>', { headers: { 'content-type': 'text/html' } }) });
}, HOOK_TIMEOUT);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  page?.stop(true);
  await browser?.close();
}, HOOK_TIMEOUT);

const preflight = (path: string, origin: string, method = 'POST') =>
  fetch(`${service.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
  });

const headerList = (value: string | null) => (value ?? '').split(',').map((h) => h.trim().toLowerCase());

function expectPreflight(res: Response, allowOrigin: string, method: string) {
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe(allowOrigin);
  expect(headerList(res.headers.get('access-control-allow-methods'))).toContain(method);
  for (const header of MCP_HEADERS) expect(headerList(res.headers.get('access-control-allow-headers'))).toContain(header);
  expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  // No cookies are involved: credentials mode is never allowed.
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
}

const rpc = (method: string, id = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params: method === 'initialize' ? { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } : {} });

function sdkClient(headers: Record<string, string>): { client: Client; transport: StreamableHTTPClientTransport } {
  const client = new Client({ name: 'browser-like', version: '1.0.0' });
  clients.push(client);
  return { client, transport: new StreamableHTTPClientTransport(new URL(`${publicUrl}/v3/mcp`), { requestInit: { headers } }) };
}

describe('CORS preflights (item 12)', () => {
  const open: [string, string][] = [
    ['/.well-known/oauth-authorization-server', 'GET'],
    ['/.well-known/oauth-protected-resource', 'GET'],
    ['/.well-known/oauth-protected-resource/v3/mcp', 'GET'],
    ['/v3/oauth/register', 'POST'],
    ['/v3/oauth/token', 'POST'],
    ['/v3/oauth/revoke', 'POST'],
  ];
  for (const [path, method] of open) {
    test(`OPTIONS ${path} from any origin → 204 with Allow-Origin *, methods, the MCP headers and Max-Age`, async () => {
      expectPreflight(await preflight(path, STRANGER, method), '*', method.toLowerCase());
    });
  }

  test('OPTIONS /v3/mcp from a local inspector → 204 naming that origin (Vary: Origin)', async () => {
    const res = await preflight('/v3/mcp', INSPECTOR);
    expectPreflight(res, INSPECTOR, 'post');
    for (const method of ['get', 'delete']) expect(headerList(res.headers.get('access-control-allow-methods'))).toContain(method);
    expect(headerList(res.headers.get('vary'))).toContain('origin');
  });

  test('answers carry Allow-Origin and expose Mcp-Session-Id and WWW-Authenticate, errors included', async () => {
    const mcp = await fetch(`${service.url}/v3/mcp`, { method: 'POST', headers: { origin: INSPECTOR, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: rpc('initialize') });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    expect(headerList(mcp.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(['mcp-session-id', 'www-authenticate']));
    const token = await fetch(`${service.url}/v3/oauth/token`, { method: 'POST', headers: { origin: STRANGER, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code' });
    expect(token.status).toBe(401);
    expect(token.headers.get('access-control-allow-origin')).toBe('*');
    const metadata = await fetch(`${service.url}/.well-known/oauth-protected-resource/v3/mcp`, { headers: { origin: STRANGER } });
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
  });

  test('the cookie-authenticated pages (sign-in, consent, decision) get no CORS: they stay same-origin', async () => {
    for (const path of ['/signin', '/oauth/consent', '/v3/oauth/authorize/decision', '/v3/oauth/authorize']) {
      const res = await preflight(path, INSPECTOR);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      const plain = await fetch(`${service.url}${path}`, { headers: { origin: INSPECTOR }, redirect: 'manual' });
      expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
});

describe('Origin validation on /v3/mcp (item 12, DNS-rebinding protection)', () => {
  test('an Origin that is not allowed → 403, preflight and request alike, before authentication', async () => {
    expect((await preflight('/v3/mcp', STRANGER)).status).toBe(403);
    const res = await fetch(`${service.url}/v3/mcp`, {
      method: 'POST',
      headers: { origin: STRANGER, apikey: owner.token, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: rpc('initialize'),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('the official SDK client sending a foreign Origin is refused with 403', async () => {
    const { client, transport } = sdkClient({ origin: STRANGER, apikey: owner.token });
    const thrown = await client.connect(transport).catch((e) => e);
    expect(thrown).toBeInstanceOf(StreamableHTTPError);
    expect((thrown as StreamableHTTPError).code).toBe(403);
  });

  test('allowed: the service’s own origin, a local inspector, and no Origin at all (non-browser clients)', async () => {
    for (const headers of [{ origin: new URL(publicUrl).origin }, { origin: INSPECTOR }, { origin: 'http://127.0.0.1:5173' }, {}] as Record<string, string>[]) {
      const { client, transport } = sdkClient({ ...headers, apikey: owner.token });
      await client.connect(transport);
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    }
  });

  test('MCP_ALLOWED_ORIGINS replaces the loopback default; * allows every origin; a bad entry stops the start with one line', async () => {
    // The setting as the service reads it at start, swapped in on the running service (starting
    // a service per value would cost seconds each); the hook reads it on every request.
    const config = service.runtime.ctx.config;
    const saved = config.mcpAllowedOrigins;
    const origins = (value: string) => loadConfig({ MCP_ALLOWED_ORIGINS: value }).mcpAllowedOrigins;
    try {
      config.mcpAllowedOrigins = origins('https://inspector.example.com');
      expect((await fetch(`${service.url}/v3/mcp`, { method: 'OPTIONS', headers: { origin: INSPECTOR } })).status).toBe(403);
      const named = await fetch(`${service.url}/v3/mcp`, { method: 'OPTIONS', headers: { origin: 'https://inspector.example.com', 'access-control-request-method': 'POST' } });
      expect(named.status).toBe(204);
      expect(named.headers.get('access-control-allow-origin')).toBe('https://inspector.example.com');
      expect((await fetch(`${service.url}/v3/mcp`, { method: 'OPTIONS', headers: { origin: new URL(publicUrl).origin } })).status).toBe(204);
      config.mcpAllowedOrigins = origins('*');
      expect((await fetch(`${service.url}/v3/mcp`, { method: 'OPTIONS', headers: { origin: STRANGER, 'access-control-request-method': 'POST' } })).status).toBe(204);
    } finally {
      config.mcpAllowedOrigins = saved;
    }
    const start = Bun.spawnSync([process.execPath, 'apps/server/main.ts'], {
      env: { ...process.env, PORT: '0', DATA_DIR: 'memory://', MCP_ALLOWED_ORIGINS: 'http://localhost:*,ftp://files.example' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    expect(start.exitCode).toBe(1);
    const lines = start.stderr.toString().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith('Switchboard could not start: MCP_ALLOWED_ORIGINS');
    expect(lines[0]).toContain('"ftp://files.example"');
  });
});

describe('a real browser on another origin (what MCP Inspector in direct mode does)', () => {
  test('discovery, registration and /v3/mcp are readable from the page: no "Failed to fetch"', async () => {
    const results = await browser.withPage(async (tab) => {
      await tab.goto(`http://127.0.0.1:${page.port}/`);
      return tab.evaluate(async (base) => {
        const read = async (response: Response) => ({ status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.text() });
        const attempt = (p: Promise<Response>) => p.then(read, (e: Error) => ({ status: 0, challenge: null, body: String(e) }));
        return {
          mcp: await attempt(
            fetch(`${base}/v3/mcp`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer not-a-token', 'mcp-protocol-version': '2025-06-18' },
              body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
            }),
          ),
          metadata: await attempt(fetch(`${base}/.well-known/oauth-protected-resource/v3/mcp`, { headers: { 'mcp-protocol-version': '2025-06-18' } })),
          server: await attempt(fetch(`${base}/.well-known/oauth-authorization-server`)),
          register: await attempt(
            fetch(`${base}/v3/oauth/register`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ redirect_uris: ['http://localhost:6274/oauth/callback'], token_endpoint_auth_method: 'none' }),
            }),
          ),
        };
      }, publicUrl);
    });
    expect(results.mcp.status).toBe(401);
    expect(results.mcp.challenge).toContain('resource_metadata=');
    expect(results.metadata.status).toBe(200);
    expect(results.server.status).toBe(200);
    expect(results.register.status).toBe(201);
  });
});

describe('capabilities (item 16): listChanged only when list-changed notifications are delivered', () => {
  test('initialize does not advertise tools.listChanged: the server never sends notifications/tools/list_changed', async () => {
    const { client, transport } = sdkClient({ apikey: owner.token });
    await client.connect(transport);
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.tools).toBeDefined();
    expect(capabilities?.tools?.listChanged).not.toBe(true);
  });
});
