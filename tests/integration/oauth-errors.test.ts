import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as oauth from 'oauth4webapi';
import type { Page } from 'playwright-core';
import { startBrowser, type TestBrowser } from '../support/browser.ts';
import { authorizeInBrowser, ownerWithPassword } from '../support/oauth.ts';
import { type TestService, useTestService } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * The negative tables of the authorization server (spec 2.5–2.7, 3.3, 4.1, 5.3, 7.3–7.5, 8):
 * black-box HTTP against a running service, each case naming the rule it checks. Codes for the
 * token endpoint come from a real person approving in Chromium.
 */

/** The issuer, and the base of every OAuth URL (spec: "PUBLIC_URL ... is the issuer"). */
let issuer: string;
// A port Chromium will navigate to (port 1 is on its unsafe list); nothing listens: the browser's visit is intercepted.
const REDIRECT = 'http://127.0.0.1:8765/callback';
const REDIRECT_2 = 'http://127.0.0.1:8765/other-callback';
const STATE = 'st ate/with?odd=chars&x=ü';

/** Spec 2.7, in its order: every scope a client may request (`legacy` is not among them). */
const REQUESTABLE = [
  'profile',
  'connections:read',
  'connections:connect',
  'connections:write',
  'messages:read',
  'messages:send',
  'contacts:read',
  'contacts:write',
  'helpdesk:read',
  'helpdesk:write',
  'webhooks:read',
  'webhooks:write',
  'stats:read',
];

type Answer = { status: number; body: any; headers: Headers };

const service = useTestService({ env: { OAUTH_AUTHORIZE_RATE_LIMIT: '1000', OAUTH_TOKEN_RATE_LIMIT: '1000' } });

beforeAll(async () => {
  issuer = service.runtime.ctx.config.publicUrl;
}, HOOK_TIMEOUT);

// ---------------------------------------------------------------------------------------------
// helpers

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: response.status, body, headers: response.headers };
}

/** Spec 7.2 (3): "OAuth JSON: exactly `{ error: <code>, error_description: <text> }`, nothing else." */
function expectOAuthError(res: Answer, status: number, error: string): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { error } });
  expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
  expect(typeof res.body.error_description).toBe('string');
  expect(res.body.error_description.length).toBeGreaterThan(0);
}

/** Spec 7.2 (1): "Standard: `{ statusCode: <int>, message: ..., error: <status text> }`." */
function expectStandardShape(res: Answer, status: number): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'message', 'statusCode']);
  expect(res.body.statusCode).toBe(status);
}

async function registerRaw(target: TestService, body: string, contentType = 'application/json'): Promise<Answer> {
  return answer(await fetch(`${target.url}/v3/oauth/register`, { method: 'POST', headers: { 'content-type': contentType }, body }));
}

const register = (metadata: unknown, target: TestService = service) => registerRaw(target, JSON.stringify(metadata));

async function registered(metadata: Record<string, unknown>): Promise<any> {
  const res = await register({ redirect_uris: [REDIRECT], ...metadata });
  expect(res.status).toBe(201);
  return res.body;
}

async function authorizeRaw(params: Record<string, string | string[] | undefined>, target: TestService = service): Promise<Answer> {
  const url = new URL('/v3/oauth/authorize', target.url);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, v);
  }
  return answer(await fetch(url, { redirect: 'manual' }));
}

type Encoding = 'form' | 'json';

async function tokenEndpoint(
  path: 'token' | 'revoke' | 'introspect',
  params: Record<string, string> | string,
  options: { encoding?: Encoding; basic?: [string, string] } = {},
  target: TestService = service,
): Promise<Answer> {
  const encoding = options.encoding ?? 'form';
  const headers: Record<string, string> = {
    'content-type': encoding === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
  };
  if (options.basic) {
    const [id, secret] = options.basic;
    headers.authorization = `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`;
  }
  const body = typeof params === 'string' ? params : encoding === 'json' ? JSON.stringify(params) : new URLSearchParams(params).toString();
  return answer(await fetch(`${target.url}/v3/oauth/${path}`, { method: 'POST', headers, body }));
}

const api = (path: string, token: string) => fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

// =============================================================================================
// 1. Registration (spec 4.1 "Registration fields (RFC 7591)", 2.5, 7.3)
// =============================================================================================

describe('POST /v3/oauth/register', () => {
  const ok = { redirect_uris: [REDIRECT] };
  const REDIRECT_RULE = 'redirect_uris: "1 to 10 URIs; absolute; no fragment; no credentials; https always, http only on loopback (localhost, 127.0.0.1, [::1]); a native-app scheme is allowed if it contains a dot."';

  const rejected: { name: string; rule: string; body: unknown; error: string }[] = [
    { name: 'redirect_uris missing', rule: 'redirect_uris | required: yes', body: { client_name: 'No URIs' }, error: 'invalid_redirect_uri' },
    { name: 'redirect_uris empty', rule: REDIRECT_RULE, body: { redirect_uris: [] }, error: 'invalid_redirect_uri' },
    { name: 'redirect_uris not an array', rule: REDIRECT_RULE, body: { redirect_uris: REDIRECT }, error: 'invalid_redirect_uri' },
    {
      name: '11 redirect_uris',
      rule: 'section 8: "redirect_uris | 1 to 10"',
      body: { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/cb${i}`) },
      error: 'invalid_redirect_uri',
    },
    { name: 'a relative redirect URI', rule: '7.3 invalid_redirect_uri: "relative URI"', body: { redirect_uris: ['/callback'] }, error: 'invalid_redirect_uri' },
    { name: 'a scheme-relative redirect URI', rule: '7.3 invalid_redirect_uri: "relative URI"', body: { redirect_uris: ['//app.example.com/cb'] }, error: 'invalid_redirect_uri' },
    { name: 'a redirect URI with a fragment', rule: '7.3 invalid_redirect_uri: "fragment"', body: { redirect_uris: ['https://app.example.com/cb#done'] }, error: 'invalid_redirect_uri' },
    { name: 'a redirect URI with an empty fragment', rule: '7.3 invalid_redirect_uri: "fragment"', body: { redirect_uris: ['https://app.example.com/cb#'] }, error: 'invalid_redirect_uri' },
    { name: 'a redirect URI with credentials', rule: '7.3 invalid_redirect_uri: "credentials"', body: { redirect_uris: ['https://user:pw@app.example.com/cb'] }, error: 'invalid_redirect_uri' },
    { name: 'a redirect URI with a user name only', rule: '7.3 invalid_redirect_uri: "credentials"', body: { redirect_uris: ['https://user@app.example.com/cb'] }, error: 'invalid_redirect_uri' },
    { name: 'http on a non-loopback host', rule: '7.3 invalid_redirect_uri: "http outside loopback"', body: { redirect_uris: ['http://app.example.com/cb'] }, error: 'invalid_redirect_uri' },
    { name: 'http on a private address', rule: '7.3 invalid_redirect_uri: "http outside loopback"', body: { redirect_uris: ['http://10.0.0.1/cb'] }, error: 'invalid_redirect_uri' },
    { name: 'http on a host that merely starts with localhost', rule: '7.3 invalid_redirect_uri: "http outside loopback"', body: { redirect_uris: ['http://localhost.example.com/cb'] }, error: 'invalid_redirect_uri' },
    { name: 'one bad URI among good ones', rule: REDIRECT_RULE, body: { redirect_uris: [REDIRECT, 'http://app.example.com/cb'] }, error: 'invalid_redirect_uri' },
    { name: 'a custom scheme without a dot (myapp:/cb)', rule: '4.1: "a native-app scheme is allowed if it contains a dot"', body: { redirect_uris: ['myapp:/cb'] }, error: 'invalid_redirect_uri' },
    { name: 'a redirect URI that is not a string', rule: REDIRECT_RULE, body: { redirect_uris: [42] }, error: 'invalid_redirect_uri' },
    { name: 'client_name of 256 characters', rule: '4.1 client_name: "up to 255 chars"', body: { ...ok, client_name: 'x'.repeat(256) }, error: 'invalid_client_metadata' },
    { name: 'client_name not a string', rule: '7.3 invalid_client_metadata: "a registration field is wrong"', body: { ...ok, client_name: 7 }, error: 'invalid_client_metadata' },
    { name: 'an unknown scope', rule: '7.3 invalid_scope: "unknown scope"', body: { ...ok, scope: 'profile chats:delete' }, error: 'invalid_scope' },
    { name: 'the scope legacy', rule: '2.7: "The scope legacy exists but no client may request it."', body: { ...ok, scope: 'legacy' }, error: 'invalid_scope' },
    { name: 'legacy among valid scopes', rule: '7.3 invalid_scope: "legacy"', body: { ...ok, scope: 'profile legacy connections:read' }, error: 'invalid_scope' },
    {
      name: 'grant_types with client_credentials',
      rule: '7.3 invalid_client_metadata: "grant_types has an unsupported value"',
      body: { ...ok, grant_types: ['authorization_code', 'client_credentials'] },
      error: 'invalid_client_metadata',
    },
    { name: 'grant_types with implicit', rule: '7.3 invalid_client_metadata: "grant_types has an unsupported value"', body: { ...ok, grant_types: ['implicit'] }, error: 'invalid_client_metadata' },
    { name: 'grant_types with password', rule: '4.1 grant_types: "authorization_code, refresh_token"', body: { ...ok, grant_types: ['authorization_code', 'password'] }, error: 'invalid_client_metadata' },
    { name: 'response_types ["token"]', rule: '4.1 response_types: "only code"', body: { ...ok, response_types: ['token'] }, error: 'invalid_client_metadata' },
    { name: 'response_types ["code", "token"]', rule: '4.1 response_types: "only code"', body: { ...ok, response_types: ['code', 'token'] }, error: 'invalid_client_metadata' },
    {
      name: 'token_endpoint_auth_method private_key_jwt',
      rule: '4.1 token_endpoint_auth_method: "none, client_secret_basic, client_secret_post"',
      body: { ...ok, token_endpoint_auth_method: 'private_key_jwt' },
      error: 'invalid_client_metadata',
    },
    {
      name: 'token_endpoint_auth_method not a string',
      rule: '4.1 token_endpoint_auth_method: "none, client_secret_basic, client_secret_post"',
      body: { ...ok, token_endpoint_auth_method: true },
      error: 'invalid_client_metadata',
    },
    { name: 'software_id a number', rule: '4.1 software_id: "validated, then ignored"', body: { ...ok, software_id: 42 }, error: 'invalid_client_metadata' },
    { name: 'software_version an object', rule: '4.1 software_version: "validated, then ignored"', body: { ...ok, software_version: { major: 1 } }, error: 'invalid_client_metadata' },
  ];

  for (const c of rejected) {
    test(`${c.name} → 400 ${c.error} (${c.rule})`, async () => {
      expectOAuthError(await register(c.body), 400, c.error);
    });
  }

  const accepted: { name: string; uris: string[] }[] = [
    { name: 'https', uris: ['https://app.example.com/callback'] },
    { name: 'http://localhost', uris: ['http://localhost:8080/callback'] },
    { name: 'http://127.0.0.1', uris: ['http://127.0.0.1/callback'] },
    { name: 'http://[::1]', uris: ['http://[::1]:3000/callback'] },
    { name: 'a native-app scheme containing a dot (com.example.app:/callback)', uris: ['com.example.app:/callback'] },
    { name: 'ten URIs', uris: Array.from({ length: 10 }, (_, i) => `https://app.example.com/cb${i}`) },
  ];
  for (const c of accepted) {
    test(`accepts ${c.name} as a redirect URI (4.1: "https always, http only on loopback ...; a native-app scheme is allowed if it contains a dot")`, async () => {
      const res = await register({ redirect_uris: c.uris });
      expect(res.status).toBe(201);
      expect(res.body.redirect_uris).toEqual(c.uris);
    });
  }

  test('client_name of 255 characters is accepted (4.1: "up to 255 chars")', async () => {
    const client = await registered({ client_name: 'n'.repeat(255) });
    expect(client.client_name).toBe('n'.repeat(255));
  });

  test('client_name of 255 characters outside the BMP (emoji) is accepted (4.1 client_name: "up to 255 chars"; section 8: "client_name | 255 characters")', async () => {
    // 255 characters (code points) that JavaScript stores as 510 UTF-16 code units.
    const name = '\u{1F600}'.repeat(255);
    const res = await register({ redirect_uris: [REDIRECT], client_name: name });
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 201, body: { client_name: name } });
  });

  test('client_name of 256 characters outside the BMP is refused (4.1 client_name: "up to 255 chars")', async () => {
    expectOAuthError(await register({ redirect_uris: [REDIRECT], client_name: '\u{1F600}'.repeat(256) }), 400, 'invalid_client_metadata');
  });

  test('valid software_id and software_version are accepted and not echoed (4.1: "validated, then ignored: not stored, not returned")', async () => {
    const client = await registered({ software_id: 'd1a4b6c0-assistant', software_version: '2.3.1' });
    expect(Object.keys(client)).not.toContain('software_id');
    expect(Object.keys(client)).not.toContain('software_version');
  });

  test('defaults: omitted grant_types → authorization_code alone; omitted scope → every requestable scope; omitted auth method → confidential with a secret', async () => {
    const client = await registered({});
    // 2.5: "client_id | string | Issued on registration."; "client_id_issued_at | integer | Unix seconds."
    expect(client.client_id).toBeString();
    expect(Number.isInteger(client.client_id_issued_at)).toBe(true);
    expect(Math.abs(client.client_id_issued_at - Date.now() / 1000)).toBeLessThan(120);
    // 4.1 grant_types: "omitted means authorization_code alone (no refresh token is ever issued)"
    expect(client.grant_types).toEqual(['authorization_code']);
    // 4.1 scope: "omitted grants every requestable scope"
    expect(client.scope.split(' ').sort()).toEqual([...REQUESTABLE].sort());
    expect(client.scope.split(' ')).not.toContain('legacy');
    // 4.1 token_endpoint_auth_method: "omitted makes a confidential client with a secret"
    expect(client.token_endpoint_auth_method).not.toBe('none');
    expect(client.client_secret).toBeString();
    expect(client.client_secret.length).toBeGreaterThan(20);
    // 2.5: "client_secret_expires_at | integer | 0 in the registration response."
    expect(client.client_secret_expires_at).toBe(0);
    // 4.1 response_types: "only code"
    expect(client.response_types).toEqual(['code']);
  });

  test('token_endpoint_auth_method none → a public client with no secret (2.5: "client_secret ... Only for a confidential client")', async () => {
    const client = await registered({ token_endpoint_auth_method: 'none' });
    expect(client.token_endpoint_auth_method).toBe('none');
    expect(client.client_secret).toBeUndefined();
  });

  test('client_secret_post and client_secret_basic both get a secret (4.1)', async () => {
    for (const method of ['client_secret_post', 'client_secret_basic']) {
      const client = await registered({ token_endpoint_auth_method: method });
      expect(client.token_endpoint_auth_method).toBe(method);
      expect(client.client_secret).toBeString();
      expect(client.client_secret_expires_at).toBe(0);
    }
  });

  const malformed: { name: string; body: string; contentType?: string }[] = [
    { name: 'a body that is not JSON', body: '{"redirect_uris": [' },
    { name: 'a JSON array', body: JSON.stringify([{ redirect_uris: [REDIRECT] }]) },
    { name: 'JSON null', body: 'null' },
    { name: 'an empty body', body: '' },
    { name: 'a form-encoded body', body: `redirect_uris=${encodeURIComponent(REDIRECT)}`, contentType: 'application/x-www-form-urlencoded' },
  ];
  for (const c of malformed) {
    // 7.3 lists invalid_request for "authorize, token, revoke, introspect" only; on register a wrong body is invalid_client_metadata.
    test(`${c.name} → 400 invalid_client_metadata in the OAuth shape, never the standard one (4.1: "JSON client metadata"; 7.2 (3))`, async () => {
      expectOAuthError(await registerRaw(service, c.body, c.contentType), 400, 'invalid_client_metadata');
    });
  }

  describe('with OAUTH_DYNAMIC_REGISTRATION=false', () => {
    const closed = useTestService({ env: { OAUTH_DYNAMIC_REGISTRATION: 'false' } });

    test('a valid registration → 400 invalid_client_metadata (7.3: "or dynamic registration is disabled")', async () => {
      expectOAuthError(await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, closed), 400, 'invalid_client_metadata');
    });
  });
});

// =============================================================================================
// 2. Authorize (spec 4.1 "Authorize query parameters", 7.4)
// =============================================================================================

describe('GET /v3/oauth/authorize', () => {
  let single: any;
  let double: any;
  const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
  const seenCodes = new Set<string>();

  beforeAll(async () => {
    single = await registered({ token_endpoint_auth_method: 'none', scope: 'profile connections:read messages:read' });
    double = await registered({ token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT, REDIRECT_2] });
  }, HOOK_TIMEOUT);

  const valid = (): Record<string, string | string[] | undefined> => ({
    response_type: 'code',
    client_id: single.client_id,
    redirect_uri: REDIRECT,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    scope: 'profile connections:read',
    state: STATE,
  });

  const BEFORE = '7.4: "Before the client and redirect URI are validated, errors are JSON bodies (no open redirect)."';
  const before: { name: string; rule: string; params: () => Record<string, string | string[] | undefined>; error: string }[] = [
    { name: 'client_id missing', rule: '4.1 client_id: required; 7.3 invalid_request "parameter missing"', params: () => ({ ...valid(), client_id: undefined }), error: 'invalid_request' },
    { name: 'client_id empty', rule: '4.1 client_id: required', params: () => ({ ...valid(), client_id: '' }), error: 'invalid_request' },
    { name: 'an unknown client_id (a UUID)', rule: '7.3 invalid_client: "400 on authorize ... unknown client_id"', params: () => ({ ...valid(), client_id: crypto.randomUUID() }), error: 'invalid_client' },
    { name: 'an unknown client_id (not a UUID)', rule: '7.3 invalid_client: "400 on authorize ... unknown client_id"', params: () => ({ ...valid(), client_id: 'no-such-client' }), error: 'invalid_client' },
    {
      name: 'a redirect_uri that is not registered',
      rule: '4.1 redirect_uri: "exact match"; 7.3 invalid_redirect_uri on authorize',
      params: () => ({ ...valid(), redirect_uri: 'https://evil.example.com/callback' }),
      error: 'invalid_redirect_uri',
    },
    {
      name: 'a redirect_uri that differs by a trailing slash',
      rule: '4.1: "Matched exactly at authorize."',
      params: () => ({ ...valid(), redirect_uri: `${REDIRECT}/` }),
      error: 'invalid_redirect_uri',
    },
    {
      name: 'a redirect_uri that differs by an extra query',
      rule: '4.1: "Matched exactly at authorize."',
      params: () => ({ ...valid(), redirect_uri: `${REDIRECT}?next=evil` }),
      error: 'invalid_redirect_uri',
    },
    {
      name: 'redirect_uri omitted when the client registered two',
      rule: '4.1 redirect_uri: "required if the client registered more than one"',
      params: () => ({ ...valid(), client_id: double.client_id, redirect_uri: undefined }),
      error: 'invalid_request',
    },
    {
      name: 'client_id repeated',
      rule: '7.3 invalid_request: "parameter ... malformed or contradictory"',
      params: () => ({ ...valid(), client_id: [single.client_id, double.client_id] }),
      error: 'invalid_request',
    },
    {
      name: 'client_id repeated with the same value',
      rule: '7.3 invalid_request: "parameter ... malformed"',
      params: () => ({ ...valid(), client_id: [single.client_id, single.client_id] }),
      error: 'invalid_request',
    },
    {
      name: 'redirect_uri repeated',
      rule: '7.3 invalid_request: "parameter ... malformed or contradictory"',
      params: () => ({ ...valid(), client_id: double.client_id, redirect_uri: [REDIRECT, REDIRECT_2] }),
      error: 'invalid_request',
    },
  ];
  for (const c of before) {
    test(`${c.name} → JSON 400 ${c.error}, no redirect (${BEFORE} ${c.rule})`, async () => {
      const res = await authorizeRaw(c.params());
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('application/json');
      expectOAuthError(res, 400, c.error);
      seenCodes.add(res.body.error);
    });
  }

  const AFTER = '7.4: "every further authorize error is a 302 to the redirect URI with query error, error_description, state, iss"';
  const after: { name: string; rule: string; params: () => Record<string, string | string[] | undefined>; error: string }[] = [
    { name: 'response_type missing', rule: '4.1 response_type: required', params: () => ({ ...valid(), response_type: undefined }), error: 'invalid_request' },
    { name: 'response_type=token', rule: '4.1 response_type: "code only"', params: () => ({ ...valid(), response_type: 'token' }), error: 'unsupported_response_type' },
    { name: 'response_type="code id_token"', rule: '4.1 response_type: "code only"', params: () => ({ ...valid(), response_type: 'code id_token' }), error: 'unsupported_response_type' },
    { name: 'code_challenge missing', rule: '4.1: "PKCE is mandatory for every client"', params: () => ({ ...valid(), code_challenge: undefined }), error: 'invalid_request' },
    { name: 'code_challenge_method missing', rule: '4.1 code_challenge_method: "S256 explicit"', params: () => ({ ...valid(), code_challenge_method: undefined }), error: 'invalid_request' },
    { name: 'code_challenge_method=plain', rule: '4.1: "plain is not supported"', params: () => ({ ...valid(), code_challenge_method: 'plain' }), error: 'invalid_request' },
    {
      name: 'a scope the client did not register',
      rule: '7.3 invalid_scope: "outside the client\'s registered scopes"',
      params: () => ({ ...valid(), scope: 'profile messages:send' }),
      error: 'invalid_scope',
    },
    { name: 'scope legacy', rule: '2.7: "The scope legacy exists but no client may request it."', params: () => ({ ...valid(), scope: 'legacy' }), error: 'invalid_scope' },
    { name: 'an unknown scope', rule: '7.3 invalid_scope: "unknown scope"', params: () => ({ ...valid(), scope: 'profile chats:delete' }), error: 'invalid_scope' },
    {
      name: 'a resource on another origin',
      rule: '7.3 invalid_target: "resource not on the issuer\'s origin"',
      params: () => ({ ...valid(), resource: 'https://evil.example.com/v3/mcp' }),
      error: 'invalid_target',
    },
    {
      name: 'a resource on the issuer host but another port',
      rule: '7.3 invalid_target: "resource not on the issuer\'s origin"',
      params: () => ({ ...valid(), resource: `${new URL(issuer).protocol}//${new URL(issuer).hostname}:1/v3/mcp` }),
      error: 'invalid_target',
    },
    { name: 'a resource with a fragment', rule: '7.3 invalid_target: "has a fragment"', params: () => ({ ...valid(), resource: `${issuer}/v3/mcp#tools` }), error: 'invalid_target' },
    { name: 'prompt=login', rule: '4.1 prompt: "consent forces the screen; none forbids interaction" (no other value)', params: () => ({ ...valid(), prompt: 'login' }), error: 'invalid_request' },
    { name: 'prompt=none with nobody signed in', rule: '4.1 prompt: "none forbids interaction"; 7.4 login_required', params: () => ({ ...valid(), prompt: 'none' }), error: 'login_required' },
    { name: 'scope repeated', rule: '7.3 invalid_request: "malformed or contradictory"', params: () => ({ ...valid(), scope: ['profile', 'connections:read'] }), error: 'invalid_request' },
  ];
  for (const c of after) {
    test(`${c.name} → 302 to the redirect URI with error=${c.error} (${AFTER}; ${c.rule})`, async () => {
      const res = await authorizeRaw(c.params());
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      const query = Object.fromEntries(location.searchParams);
      expect(query).toEqual({ error: c.error, error_description: expect.any(String), state: STATE, iss: issuer });
      expect(query.error_description!.length).toBeGreaterThan(0);
      seenCodes.add(query.error!);
    });
  }

  test('a client that registered two redirect URIs gets errors on the one it named (7.4)', async () => {
    const res = await authorizeRaw({ ...valid(), client_id: double.client_id, redirect_uri: REDIRECT_2, response_type: 'token' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_2);
    expect(location.searchParams.get('error')).toBe('unsupported_response_type');
    expect(location.searchParams.get('iss')).toBe(issuer);
  });

  test('a redirect error without state carries no state (4.1 state: "echoed back unchanged")', async () => {
    const res = await authorizeRaw({ ...valid(), state: undefined, response_type: 'token' });
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('unsupported_response_type');
    expect(location.searchParams.has('state')).toBe(false);
    expect(location.searchParams.get('iss')).toBe(issuer);
  });

  test('redirect_uri omitted with a single registered URI works: 302 to the sign-in page (4.1 redirect_uri: "if the client registered more than one")', async () => {
    const res = await authorizeRaw({ ...valid(), redirect_uri: undefined });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!, issuer);
    expect(location.origin).toBe(new URL(issuer).origin);
    expect(location.pathname).toBe('/signin');
    expect(location.searchParams.get('return_to')).toBeString();
  });

  test('a valid request with nobody signed in → 302 to /signin?return_to=…, not to the client (4.1: "always 302")', async () => {
    const res = await authorizeRaw(valid());
    expect(res.status).toBe(302);
    const raw = res.headers.get('location')!;
    expect(raw.startsWith(REDIRECT)).toBe(false);
    const location = new URL(raw, issuer);
    expect(location.origin).toBe(new URL(issuer).origin);
    expect(location.pathname).toBe('/signin');
    const returnTo = location.searchParams.get('return_to')!;
    expect(returnTo.startsWith('/')).toBe(true);
    expect(returnTo.startsWith('//')).toBe(false);
  });

  test('scope omitted defaults to profile and is accepted (4.1 scope: "default profile")', async () => {
    const res = await authorizeRaw({ ...valid(), scope: undefined });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location')!, issuer).pathname).toBe('/signin');
  });

  test('interaction_required and temporarily_unavailable never appear (7.4: "The codes interaction_required and temporarily_unavailable are never returned.")', () => {
    expect(seenCodes.size).toBeGreaterThan(5);
    expect(seenCodes.has('interaction_required')).toBe(false);
    expect(seenCodes.has('temporarily_unavailable')).toBe(false);
  });
});

// =============================================================================================
// 3. Token, revoke, introspect (spec 4.1 "Token endpoint parameters", 3.3, 5.3, 7.3)
// =============================================================================================

describe('POST /v3/oauth/token, /revoke, /introspect', () => {
  let browser: TestBrowser;
  let page: Page;
  let closePage: () => Promise<void>;
  let owner: { userId: string; workspaceId: string; token: string; email: string };
  /** public, authorization_code + refresh_token, two redirect URIs */
  let pub: any;
  /** public, another client */
  let other: any;
  /** confidential (client_secret_basic by default), authorization_code only */
  let conf: any;
  /** confidential, client_secret_post */
  let post: any;
  /** a real, unused code of `pub` for the missing-parameter cases */
  let spare: { code: string; verifier: string };

  /** A real authorization code: the owner approves in Chromium (one signed-in context for the whole file). */
  async function codeFor(client: any, options: { scope?: string; redirectUri?: string; resource?: string } = {}) {
    const redirectUri = options.redirectUri ?? REDIRECT;
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(`${issuer}/v3/oauth/authorize`);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', client.client_id);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('scope', options.scope ?? 'profile connections:read');
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    if (options.resource) url.searchParams.set('resource', options.resource);
    // 4.1 prompt: "consent forces the screen". Without it a standing approval answers at once, and
    // Chromium does not let the route intercept that immediate redirect of the first navigation.
    url.searchParams.set('prompt', 'consent');
    const back = await authorizeInBrowser(page, url.toString(), redirectUri, owner, { workspaceId: owner.workspaceId });
    // 4.1: "After consent the browser is redirected to redirect_uri with query code, state, iss."
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('iss')).toBe(issuer);
    const code = back.searchParams.get('code');
    if (!code) throw new Error(`no code came back: ${back}`);
    return { code, verifier };
  }

  const codeParams = (client: any, grant: { code: string; verifier: string }, extra: Record<string, string> = {}) => ({
    grant_type: 'authorization_code',
    code: grant.code,
    redirect_uri: REDIRECT,
    client_id: client.client_id,
    code_verifier: grant.verifier,
    ...extra,
  });

  beforeAll(async () => {
    browser = await startBrowser();
    ({ page, close: closePage } = await browser.openPage());
    owner = await ownerWithPassword(service, 'oauth-errors', 'Errors Inc');
    pub = await registered({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT, REDIRECT_2] });
    other = await registered({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
    conf = await registered({ client_name: 'Confidential' });
    post = await registered({ token_endpoint_auth_method: 'client_secret_post' });
    spare = await codeFor(pub);
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    await closePage?.();
    await browser?.close();
  });

  type TokenCase = {
    name: string;
    rule: string;
    params: () => Record<string, string>;
    basic?: () => [string, string];
    status: number;
    error: string;
    /** RFC 6749 5.2: a failed HTTP Basic authentication answers with a Basic challenge. */
    basicChallenge?: boolean;
  };
  const tokenCases: TokenCase[] = [
    { name: 'grant_type missing', rule: '7.3 invalid_request: "parameter missing"', params: () => ({ client_id: pub.client_id, code: 'x', redirect_uri: REDIRECT }), status: 400, error: 'invalid_request' },
    {
      name: 'grant_type=password',
      rule: '7.3 unsupported_grant_type: "grant_type is neither authorization_code nor refresh_token"',
      params: () => ({ grant_type: 'password', client_id: pub.client_id, username: 'a', password: 'b' }),
      status: 400,
      error: 'unsupported_grant_type',
    },
    {
      name: 'grant_type=client_credentials',
      rule: '7.3 unsupported_grant_type: "grant_type is neither authorization_code nor refresh_token"',
      params: () => ({ grant_type: 'client_credentials' }),
      basic: () => [conf.client_id, conf.client_secret],
      status: 400,
      error: 'unsupported_grant_type',
    },
    {
      name: 'refresh_token grant for a client that registered only authorization_code',
      rule: '7.3 unauthorized_client: "the client did not register the grant being used"',
      params: () => ({ grant_type: 'refresh_token', refresh_token: 'sbrt_whatever' }),
      basic: () => [conf.client_id, conf.client_secret],
      status: 400,
      error: 'unauthorized_client',
    },
    {
      name: 'an unknown client',
      rule: '7.3 invalid_client: "401 on token ... unknown client_id"',
      params: () => ({ grant_type: 'authorization_code', client_id: crypto.randomUUID(), code: 'x', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'an unknown client in HTTP Basic',
      rule: '7.3 invalid_client: "401 on token ... unknown client_id"',
      params: () => ({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) }),
      basic: () => ['no-such-client', 'secret'],
      status: 401,
      error: 'invalid_client',
      basicChallenge: true,
    },
    {
      name: 'no client at all',
      rule: '7.3 invalid_client: "401 on token"; 4.1 token endpoint credential: "client auth"',
      params: () => ({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'a confidential client without its secret',
      rule: '7.3 invalid_client: "confidential client\'s secret missing"',
      params: () => ({ grant_type: 'authorization_code', client_id: conf.client_id, code: 'x', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'a confidential client with a wrong secret in HTTP Basic',
      rule: '7.3 invalid_client: "confidential client\'s secret ... wrong"',
      params: () => ({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) }),
      basic: () => [conf.client_id, `${conf.client_secret}x`],
      status: 401,
      error: 'invalid_client',
      basicChallenge: true,
    },
    {
      name: 'a client_secret_post client with a wrong client_secret field',
      rule: '7.3 invalid_client: "confidential client\'s secret ... wrong"',
      params: () => ({ grant_type: 'authorization_code', client_id: post.client_id, client_secret: 'wrong', code: 'x', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: "a confidential client presenting another client's secret",
      rule: '7.3 invalid_client: "confidential client\'s secret ... wrong"',
      params: () => ({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) }),
      basic: () => [conf.client_id, post.client_secret],
      status: 401,
      error: 'invalid_client',
      basicChallenge: true,
    },
    {
      name: 'a public client sending a client_secret',
      rule: '4.1: "A public client must not send client_secret"; 7.3 invalid_client: "a public client sent a secret"',
      params: () => ({ ...codeParams(pub, spare), client_secret: 'anything' }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'a public client sending a secret in HTTP Basic',
      rule: '7.3 invalid_client: "a public client sent a secret"',
      params: () => ({ grant_type: 'authorization_code', code: spare.code, redirect_uri: REDIRECT, code_verifier: spare.verifier }),
      basic: () => [pub.client_id, 'anything'],
      status: 401,
      error: 'invalid_client',
      basicChallenge: true,
    },
    {
      name: 'code missing',
      rule: '4.1 authorization_code parameters: "grant_type, code, redirect_uri, client_id, code_verifier"; 7.3 invalid_request',
      params: () => {
        const { code: _, ...rest } = codeParams(pub, spare);
        return rest;
      },
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'redirect_uri missing',
      rule: '4.1 authorization_code parameters: "grant_type, code, redirect_uri, client_id, code_verifier"; 7.3 invalid_request',
      params: () => {
        const { redirect_uri: _, ...rest } = codeParams(pub, spare);
        return rest;
      },
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'code_verifier missing',
      rule: '4.1: "PKCE is mandatory for every client"; 7.3 invalid_request',
      params: () => {
        const { code_verifier: _, ...rest } = codeParams(pub, spare);
        return rest;
      },
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'refresh_token missing',
      rule: '4.1 refresh_token parameters: "grant_type, refresh_token, client_id"; 7.3 invalid_request',
      params: () => ({ grant_type: 'refresh_token', client_id: pub.client_id }),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'an unknown code',
      rule: '7.3 invalid_grant',
      params: () => codeParams(pub, { code: 'not-a-code', verifier: spare.verifier }),
      status: 400,
      error: 'invalid_grant',
    },
    {
      name: 'an unknown refresh token',
      rule: '7.3 invalid_grant',
      params: () => ({ grant_type: 'refresh_token', client_id: pub.client_id, refresh_token: 'sbrt_not-a-token' }),
      status: 400,
      error: 'invalid_grant',
    },
  ];

  for (const encoding of ['form', 'json'] as const) {
    for (const c of tokenCases) {
      test(`[${encoding}] ${c.name} → ${c.status} ${c.error} (${c.rule})`, async () => {
        const res = await tokenEndpoint('token', c.params(), { encoding, basic: c.basic?.() });
        expectOAuthError(res, c.status, c.error);
        if (c.basicChallenge) expect(res.headers.get('www-authenticate') ?? '').toMatch(/^Basic\b/i);
      });
    }
  }

  test('a repeated parameter → 400 invalid_request (7.3 invalid_request: "malformed or contradictory")', async () => {
    const body = `grant_type=refresh_token&grant_type=refresh_token&client_id=${pub.client_id}&refresh_token=sbrt_x`;
    expectOAuthError(await tokenEndpoint('token', body), 400, 'invalid_request');
    const body2 = `grant_type=authorization_code&client_id=${pub.client_id}&code=a&code=b&redirect_uri=${encodeURIComponent(REDIRECT)}&code_verifier=${'v'.repeat(43)}`;
    expectOAuthError(await tokenEndpoint('token', body2), 400, 'invalid_request');
  });

  test('a body that is neither form nor JSON, and malformed JSON → 400 invalid_request in the OAuth shape (4.1: "form-urlencoded or JSON")', async () => {
    const text = await answer(await fetch(`${service.url}/v3/oauth/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'grant_type=refresh_token' }));
    expectOAuthError(text, 400, 'invalid_request');
    expectOAuthError(await tokenEndpoint('token', '{"grant_type": ', { encoding: 'json' }), 400, 'invalid_request');
  });

  test('the spare code survived the malformed requests and exchanges as JSON (4.1: "form-urlencoded or JSON"; 2.6)', async () => {
    const res = await tokenEndpoint('token', codeParams(pub, spare), { encoding: 'json' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String), scope: 'profile connections:read' });
  }, HOOK_TIMEOUT);

  test('a wrong code_verifier → invalid_grant, and the code is burnt afterwards (3.3: "Exchangeable once")', async () => {
    const grant = await codeFor(pub);
    const wrong = await tokenEndpoint('token', codeParams(pub, { code: grant.code, verifier: oauth.generateRandomCodeVerifier() }));
    expectOAuthError(wrong, 400, 'invalid_grant');
    const retry = await tokenEndpoint('token', codeParams(pub, grant));
    expectOAuthError(retry, 400, 'invalid_grant');
  }, HOOK_TIMEOUT);

  test("the code of another client → invalid_grant (7.3 invalid_grant: \"belongs to another client\")", async () => {
    const grant = await codeFor(pub);
    expectOAuthError(await tokenEndpoint('token', codeParams(other, grant)), 400, 'invalid_grant');
  }, HOOK_TIMEOUT);

  test('a code used twice → invalid_grant, and the tokens of the first exchange are dead (3.3: "on replay the whole grant is revoked")', async () => {
    const grant = await codeFor(pub);
    const first = await tokenEndpoint('token', codeParams(pub, grant));
    expect(first.status).toBe(200);
    expect((await api('/v3/connections', first.body.access_token)).status).toBe(200);
    expectOAuthError(await tokenEndpoint('token', codeParams(pub, grant)), 400, 'invalid_grant');
    const after = await api('/v3/connections', first.body.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expectOAuthError(await tokenEndpoint('token', { grant_type: 'refresh_token', client_id: pub.client_id, refresh_token: first.body.refresh_token }), 400, 'invalid_grant');
  }, HOOK_TIMEOUT);

  test('a redirect_uri different from the one of the request → invalid_grant (4.1 token parameters: redirect_uri; 7.3 invalid_grant)', async () => {
    const grant = await codeFor(pub);
    // REDIRECT_2 is registered too: only the one the code was issued for counts.
    expectOAuthError(await tokenEndpoint('token', codeParams(pub, grant, { redirect_uri: REDIRECT_2 })), 400, 'invalid_grant');
  }, HOOK_TIMEOUT);

  test('a resource on another origin at the code exchange → invalid_target (7.3 invalid_target: "resource not on the issuer\'s origin")', async () => {
    const grant = await codeFor(pub);
    expectOAuthError(await tokenEndpoint('token', codeParams(pub, grant, { resource: 'https://evil.example.com/v3/mcp' })), 400, 'invalid_target');
  }, HOOK_TIMEOUT);

  test('a confidential client exchanges with HTTP Basic and, without refresh_token registered, gets no refresh token (4.1 grant_types: "no refresh token is ever issued")', async () => {
    const grant = await codeFor(conf);
    const { client_id: _, ...params } = codeParams(conf, grant);
    const res = await tokenEndpoint('token', params, { basic: [conf.client_id, conf.client_secret] });
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeUndefined();
    expect(res.body.token_type).toBe('Bearer');
  }, HOOK_TIMEOUT);

  describe('refresh', () => {
    let refreshToken: string;
    beforeAll(async () => {
      const grant = await codeFor(pub, { scope: 'profile connections:read' });
      const res = await tokenEndpoint('token', codeParams(pub, grant), { encoding: 'json' });
      expect(res.status).toBe(200);
      refreshToken = res.body.refresh_token;
    }, HOOK_TIMEOUT);

    const refreshCases: { name: string; rule: string; extra: () => Record<string, string>; error: string }[] = [
      { name: 'widening the scope', rule: '5.3: "A scope never widens."; 7.3 invalid_scope: "a refresh tried to widen"', extra: () => ({ scope: 'profile connections:read messages:read' }), error: 'invalid_scope' },
      { name: 'an unknown scope', rule: '7.3 invalid_scope: "unknown scope"', extra: () => ({ scope: 'profile chats:delete' }), error: 'invalid_scope' },
      { name: 'the scope legacy', rule: '7.3 invalid_scope: "legacy"', extra: () => ({ scope: 'legacy' }), error: 'invalid_scope' },
      { name: 'a resource on another origin', rule: '7.3 invalid_target: "resource not on the issuer\'s origin"', extra: () => ({ resource: 'https://evil.example.com/v3/mcp' }), error: 'invalid_target' },
      { name: 'a resource with a fragment', rule: '7.3 invalid_target: "has a fragment"', extra: () => ({ resource: `${issuer}/v3/mcp#x` }), error: 'invalid_target' },
    ];
    for (const encoding of ['form', 'json'] as const) {
      for (const c of refreshCases) {
        test(`[${encoding}] refresh ${c.name} → 400 ${c.error} (${c.rule})`, async () => {
          const res = await tokenEndpoint('token', { grant_type: 'refresh_token', client_id: pub.client_id, refresh_token: refreshToken, ...c.extra() }, { encoding });
          expectOAuthError(res, 400, c.error);
        });
      }
    }

    test('the refresh token of another client → invalid_grant (7.3 invalid_grant)', async () => {
      expectOAuthError(await tokenEndpoint('token', { grant_type: 'refresh_token', client_id: other.client_id, refresh_token: refreshToken }), 400, 'invalid_grant');
    });

    test('after the refused refreshes the refresh token still works (a refused request changes nothing)', async () => {
      const res = await tokenEndpoint('token', { grant_type: 'refresh_token', client_id: pub.client_id, refresh_token: refreshToken, scope: 'profile' });
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('profile');
    });
  });

  const revokeCases: { name: string; rule: string; path: 'revoke' | 'introspect'; params: () => Record<string, string>; basic?: () => [string, string]; status: number; error: string; basicChallenge?: boolean }[] = [
    { name: 'revoke without token', rule: '7.3 invalid_request on revoke: "parameter missing"', path: 'revoke', params: () => ({ client_id: pub.client_id }), status: 400, error: 'invalid_request' },
    {
      name: 'introspect without token',
      rule: '7.3 invalid_request on introspect: "parameter missing"',
      path: 'introspect',
      params: () => ({}),
      basic: () => [conf.client_id, conf.client_secret],
      status: 400,
      error: 'invalid_request',
    },
    { name: 'revoke by an unknown client', rule: '7.3 invalid_client: "401 on ... revoke"', path: 'revoke', params: () => ({ client_id: crypto.randomUUID(), token: 'x' }), status: 401, error: 'invalid_client' },
    {
      name: 'revoke with a wrong secret in HTTP Basic',
      rule: '7.3 invalid_client: "401 on ... revoke"',
      path: 'revoke',
      params: () => ({ token: 'x' }),
      basic: () => [conf.client_id, 'wrong'],
      status: 401,
      error: 'invalid_client',
      basicChallenge: true,
    },
    { name: 'revoke by a public client sending a secret', rule: '7.3 invalid_client: "a public client sent a secret"', path: 'revoke', params: () => ({ client_id: pub.client_id, client_secret: 's', token: 'x' }), status: 401, error: 'invalid_client' },
    { name: 'introspect without any client', rule: '4.1 introspect credential: "client auth"; 7.3 invalid_client 401', path: 'introspect', params: () => ({ token: 'x' }), status: 401, error: 'invalid_client' },
    {
      name: 'introspect with a wrong secret in HTTP Basic',
      rule: '7.3 invalid_client: "401 on ... introspect"',
      path: 'introspect',
      params: () => ({ token: 'x' }),
      basic: () => [conf.client_id, 'wrong'],
      status: 401,
      error: 'invalid_client',
      basicChallenge: true,
    },
    { name: 'introspect by a confidential client without its secret', rule: '7.3 invalid_client: "secret missing"', path: 'introspect', params: () => ({ client_id: conf.client_id, token: 'x' }), status: 401, error: 'invalid_client' },
  ];
  for (const c of revokeCases) {
    test(`${c.name} → ${c.status} ${c.error} (${c.rule})`, async () => {
      const res = await tokenEndpoint(c.path, c.params(), { basic: c.basic?.() });
      expectOAuthError(res, c.status, c.error);
      if (c.basicChallenge) expect(res.headers.get('www-authenticate') ?? '').toMatch(/^Basic\b/i);
    });
  }

  test('revoking an unknown token → 200 (4.1 revoke: "200 for any input, including an unknown token")', async () => {
    expect((await tokenEndpoint('revoke', { client_id: pub.client_id, token: 'sbat_unknown' })).status).toBe(200);
    expect((await tokenEndpoint('revoke', { token: 'not-a-token' }, { basic: [conf.client_id, conf.client_secret] })).status).toBe(200);
    expect((await tokenEndpoint('revoke', { client_id: pub.client_id, token: 'sbrt_unknown', token_type_hint: 'refresh_token' }, { encoding: 'json' })).status).toBe(200);
  });
});

// =============================================================================================
// 4. Rate limits (spec section 8, 7.1)
// =============================================================================================

describe('rate limits on default settings', () => {
  const limited = useTestService();

  /** 7.1: "429 | Rate limiting on OAuth endpoints; body not in the OAuth error shape." */
  function expect429(res: Answer): void {
    expectStandardShape(res, 429);
    expect(typeof res.body.message).toBe('string');
    expect(res.body.error).toBe('Too Many Requests');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
  }

  test('the 16th POST /v3/oauth/register within a minute → 429 (8: "POST /v3/oauth/register | 15 requests per minute per IP")', async () => {
    for (let i = 1; i <= 15; i++) {
      const res = await register(i === 1 ? { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } : {}, limited);
      expect(res.status).toBe(i === 1 ? 201 : 400);
    }
    expect429(await register({ redirect_uris: [REDIRECT] }, limited));
  });

  test('the 16th GET /v3/oauth/authorize within a minute → 429, counted apart from register (8: "GET /v3/oauth/authorize ... 15 requests per minute per IP")', async () => {
    for (let i = 1; i <= 15; i++) expect((await authorizeRaw({}, limited)).status).toBe(400);
    expect429(await authorizeRaw({ client_id: crypto.randomUUID() }, limited));
  });

  test('the 121st POST /v3/oauth/token within a minute → 429 (8: "POST /v3/oauth/token, /revoke, /introspect | 120 requests per minute per IP")', async () => {
    for (let i = 1; i <= 120; i++) {
      const res = await tokenEndpoint('token', { grant_type: 'password' }, {}, limited);
      if (res.status !== 401) throw new Error(`request ${i}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect429(await tokenEndpoint('token', { grant_type: 'password' }, {}, limited));
  });

  test('discovery documents are not limited (8: "Discovery documents | no limit, cached 5 minutes")', async () => {
    for (let i = 0; i < 25; i++) {
      expect((await fetch(`${limited.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
    }
  });
});

// =============================================================================================
// 5. Discovery (spec 4.1, RFC 8414, RFC 9728)
// =============================================================================================

describe('discovery documents', () => {
  test('/.well-known/oauth-authorization-server (4.1: "issuer, endpoints, supported scopes, grant types, code_challenge_methods_supported, prompt_values_supported")', async () => {
    const res = await fetch(`${service.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    // 8: "Discovery documents | no limit, cached 5 minutes"
    expect(res.headers.get('cache-control')).toContain('max-age=300');
    const doc = await res.json();
    expect(doc.issuer).toBe(issuer);
    expect(doc.authorization_endpoint).toBe(`${issuer}/v3/oauth/authorize`);
    expect(doc.token_endpoint).toBe(`${issuer}/v3/oauth/token`);
    expect(doc.registration_endpoint).toBe(`${issuer}/v3/oauth/register`);
    expect(doc.revocation_endpoint).toBe(`${issuer}/v3/oauth/revoke`);
    expect(doc.introspection_endpoint).toBe(`${issuer}/v3/oauth/introspect`);
    // 4.1: "plain is not supported"
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    // 4.1 prompt: "consent forces the screen; none forbids interaction"
    expect([...doc.prompt_values_supported].sort()).toEqual(['consent', 'none']);
    expect([...doc.grant_types_supported].sort()).toEqual(['authorization_code', 'refresh_token']);
    expect(doc.response_types_supported).toEqual(['code']);
    expect([...doc.token_endpoint_auth_methods_supported].sort()).toEqual(['client_secret_basic', 'client_secret_post', 'none']);
    // 7.4: "iss (issuer, RFC 9207)"
    expect(doc.authorization_response_iss_parameter_supported).toBe(true);
    // 2.7: "The scope legacy exists but no client may request it."
    expect(doc.scopes_supported).not.toContain('legacy');
    expect([...doc.scopes_supported].sort()).toEqual([...REQUESTABLE].sort());
  });

  test('/.well-known/oauth-protected-resource names the API and its authorization server (4.1)', async () => {
    const res = await fetch(`${service.url}/.well-known/oauth-protected-resource`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('max-age=300');
    const doc = await res.json();
    expect(doc.resource === issuer || doc.resource.startsWith(`${issuer}/`)).toBe(true);
    expect(doc.authorization_servers).toContain(issuer);
    expect(doc.scopes_supported ?? []).not.toContain('legacy');
  });

  test('/.well-known/oauth-protected-resource/v3/mcp has the MCP resource and only the scopes it uses (4.1: "the MCP endpoint and only the scopes it uses")', async () => {
    const res = await fetch(`${service.url}/.well-known/oauth-protected-resource/v3/mcp`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('max-age=300');
    const doc = await res.json();
    expect(doc.resource).toBe(`${issuer}/v3/mcp`);
    expect(doc.authorization_servers).toContain(issuer);
    // The base tools' scopes and the helpdesk's (all plugins are on here).
    expect([...doc.scopes_supported].sort()).toEqual(['connections:read', 'helpdesk:read', 'helpdesk:write', 'messages:read', 'messages:send']);
  });

  test('oauth4webapi accepts the authorization server metadata (RFC 8414 issuer check)', async () => {
    const as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }));
    expect(as.issuer).toBe(issuer);
  });
});

// =============================================================================================
// 6. API-call errors (spec 7.5, 5.3)
// =============================================================================================

describe('OAuth errors on API calls', () => {
  test('no credential at all → 401 with WWW-Authenticate: Bearer realm="switchboard", resource_metadata=… (7.5; RFC 9728)', async () => {
    const res = await answer(await fetch(`${service.url}/v3/connections`));
    expect(res.status).toBe(401);
    const header = res.headers.get('www-authenticate') ?? '';
    expect(header.startsWith('Bearer realm="switchboard"')).toBe(true);
    expect(header).toContain(`resource_metadata="${issuer}/.well-known/oauth-protected-resource"`);
  });

  const garbage: { name: string; token: string }[] = [
    { name: 'a garbage bearer token', token: 'garbage' },
    { name: 'a bearer token shaped like ours but unknown', token: 'sbat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    { name: 'a refresh token used as a bearer token', token: 'sbrt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  ];
  for (const c of garbage) {
    test(`${c.name} → 401 invalid_token in the OAuth body and the header (7.5: "invalid_token | 401 | token missing, expired, revoked, or issued for a different resource")`, async () => {
      const res = await answer(await api('/v3/connections', c.token));
      expectOAuthError(res, 401, 'invalid_token');
      const header = res.headers.get('www-authenticate') ?? '';
      expect(header.startsWith('Bearer realm="switchboard"')).toBe(true);
      expect(header).toContain('error="invalid_token"');
      expect(header).toContain('error_description=');
      expect(header).toContain(`resource_metadata="${issuer}/.well-known/oauth-protected-resource"`);
    });
  }

  test('a garbage bearer token on the MCP endpoint points at the MCP resource document (7.5 resource_metadata)', async () => {
    const res = await answer(
      await fetch(`${service.url}/v3/mcp`, {
        method: 'POST',
        headers: { authorization: 'Bearer garbage', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }),
    );
    expectOAuthError(res, 401, 'invalid_token');
    expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${issuer}/.well-known/oauth-protected-resource/v3/mcp"`);
  });
});
