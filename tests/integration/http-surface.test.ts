import { beforeAll, describe, expect, test } from 'bun:test';
import { createHttpApp } from '../../adapters/http/app.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { addMember, expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/** What every route shares: health, pagination (spec 2.2), error shapes (spec 7.2), the OpenAPI document. */

/** Everyone in the owner's workspace, in the order they joined. */
let everyone: string[];
const EXTRA_MEMBERS = 12; // 13 members with the Owner: not a multiple of any page size used below

const service = useTestService();
const owner = useOwner(service);

beforeAll(async () => {
  everyone = [owner.userId];
  for (let i = 0; i < EXTRA_MEMBERS; i++) {
    everyone.push((await addMember(service, owner.token, 'AGENT', `member${String(i).padStart(2, '0')}-${crypto.randomUUID().slice(0, 6)}@example.com`)).userId);
  }
}, HOOK_TIMEOUT);

const members = (query: string) => service.call('GET', `/v3/members${query}`, { apikey: owner.token });

describe('service endpoints', () => {
  test('GET /healthz is 200 {"status":"ok"}', async () => {
    // ARCHITECTURE contract: "`GET /healthz` 200 `{"status":"ok"}`"
    const res = await service.call('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  test('GET /docs is the OpenAPI UI (HTML)', async () => {
    // ARCHITECTURE contract: "`GET /docs` the OpenAPI UI, `GET /docs/json` the document."
    const res = await service.call('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(String(res.body).toLowerCase()).toContain('<html');
  });
});

describe('pagination (spec 2.2)', () => {
  const total = EXTRA_MEMBERS + 1;

  test('defaults: page 1, 10 per page', async () => {
    // Spec 2.2: "`page` | integer | 1" / "`per_page` | integer | 10"
    const res = await members('');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total, totalPages: 2, currentPage: 1, perPage: 10 });
    expect(res.body.data).toHaveLength(10);
  });

  test('`perPage` and `search` are ignored silently; `per_page` and `s` work', async () => {
    // Spec 2.2: "The names `perPage` and `search` are silently ignored (defaults apply, no error)."
    const ignored = await members('?perPage=1&search=zzz');
    expect(ignored.status).toBe(200);
    expect(ignored.body).toMatchObject({ total, totalPages: 2, currentPage: 1, perPage: 10 });
    expect(ignored.body.data).toHaveLength(10);

    const perPage = await members('?per_page=1');
    expect(perPage.body).toMatchObject({ total, totalPages: total, currentPage: 1, perPage: 1 });
    expect(perPage.body.data).toHaveLength(1);

    // Spec 2.2: "`s` | string | none | Free-text search".
    const found = await members('?s=member07');
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ total: 1, totalPages: 1, currentPage: 1 });
    expect(found.body.data[0].userId).toBe(everyone[8]!);
    const nothing = await members('?s=zzz');
    expect(nothing.body).toMatchObject({ total: 0, data: [] });
  });

  test('page=0&per_page=1000 is 400 with one message per broken rule', async () => {
    // Spec 2.2: "`page` | integer | 1 | 1-based." / "`per_page` ... Allowed range depends on the endpoint."
    // Spec 7.2: "message: <array of strings for validation failures, one per broken rule>"
    const res = await members('?page=0&per_page=1000');
    expectStandardError(res, 400, 'Bad Request');
    expect(Array.isArray(res.body.message)).toBe(true);
    expect(res.body.message).toHaveLength(2);
    expect(res.body.message.some((m: string) => m.includes('page') && !m.includes('per_page'))).toBe(true);
    expect(res.body.message.some((m: string) => m.includes('per_page'))).toBe(true);

    for (const query of ['?page=abc', '?per_page=-1', '?page=1.5']) {
      const one = await members(query);
      expectStandardError(one, 400, 'Bad Request');
      expect(one.body.message).toHaveLength(1);
    }
  });

  test('total and totalPages are right over several pages, and pages do not overlap', async () => {
    // Spec 2.2: "Response body: { data: [..], total: <int>, totalPages: <int>, currentPage: <int>, perPage: <int> }."
    const seen: string[] = [];
    const sizes: number[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await members(`?page=${page}&per_page=5`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total, totalPages: 3, currentPage: page, perPage: 5 });
      sizes.push(res.body.data.length);
      seen.push(...res.body.data.map((m: { userId: string }) => m.userId));
    }
    expect(sizes).toEqual([5, 5, 3]);
    expect(new Set(seen).size).toBe(total);
    expect([...seen].sort()).toEqual([...everyone].sort());

    const beyond = await members('?page=4&per_page=5');
    expect(beyond.status).toBe(200);
    expect(beyond.body).toMatchObject({ data: [], total, totalPages: 3, currentPage: 4, perPage: 5 });
  });

  test('the api-token list uses the same envelope', async () => {
    // Spec 2.2 applies to every page-based list.
    for (let i = 0; i < 2; i++) await service.call('POST', '/v3/api-tokens', { apikey: owner.token, body: { name: `t${i}` } });
    const res = await service.call('GET', '/v3/api-tokens?per_page=2&page=2', { apikey: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 3, totalPages: 2, currentPage: 2, perPage: 2 });
    expect(res.body.data).toHaveLength(1);
    const bad = await service.call('GET', '/v3/api-tokens?page=0&per_page=1000', { apikey: owner.token });
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message).toHaveLength(2);
  });
});

describe('error shapes (spec 7.2)', () => {
  test('an unknown route is 404 in the standard shape, with or without a key', async () => {
    // Spec 7.1: "404 | Does not exist or is not visible to the caller." Spec 7.2 standard shape.
    expectStandardError(await service.call('GET', '/v3/does-not-exist'), 404, 'Not Found');
    expectStandardError(await service.call('GET', '/v3/does-not-exist', { apikey: owner.token }), 404, 'Not Found');
    expectStandardError(await service.call('POST', '/nope', { body: { a: 1 } }), 404, 'Not Found');
    expectStandardError(await service.call('PUT', '/v3/accounts', { apikey: owner.token, body: {} }), 404, 'Not Found');
  });

  test('a malformed JSON body is 400 in the standard shape, never 500', async () => {
    // Spec 7.1: "400 | Malformed request". Spec 7.2 standard shape.
    const headers = { 'content-type': 'application/json' };
    for (const [method, path] of [
      ['POST', '/v3/members'],
      ['POST', '/v3/api-tokens'],
      ['PATCH', `/v3/accounts/${owner.workspaceId}`],
      ['PATCH', `/v3/members/${owner.userId}`],
    ] as const) {
      // Truncated or invalid JSON, `null`, and an empty body under a JSON content type.
      for (const body of ['{"email": ', '{bad json}', "{'single': 'quotes'}", 'null', '']) {
        const res = await service.call(method, path, { apikey: owner.token, headers, body });
        expectStandardError(res, 400, 'Bad Request');
      }
    }
  });

  test('a JSON body that is not an object (1, [], "x", null) is 400 and changes nothing', async () => {
    const before = await service.call('GET', '/v3/accounts', { apikey: owner.token });
    for (const body of ['1', '[]', '"x"', 'null']) {
      const res = await service.call('PATCH', `/v3/accounts/${owner.workspaceId}`, {
        apikey: owner.token,
        headers: { 'content-type': 'application/json' },
        body,
      });
      expectStandardError(res, 400, 'Bad Request');
      expect(res.body.message).toEqual(['body must be a JSON object']);
    }
    expect((await service.call('GET', '/v3/accounts', { apikey: owner.token })).body).toEqual(before.body);
  });

  test('a malformed path id is 400, not 500', async () => {
    // Spec 2.1: "Resource ids generated by the service | UUID strings". Spec 7.1: "400 | Malformed request".
    expectStandardError(await service.call('DELETE', '/v3/api-tokens/not-a-uuid', { apikey: owner.token }), 400, 'Bad Request');
    expectStandardError(await service.call('PATCH', '/v3/members/42', { apikey: owner.token, body: { roles: ['AGENT'] } }), 400, 'Bad Request');
  });
});

describe('the OpenAPI document (GET /docs/json)', () => {
  const KNOWN = [
    ['get', '/healthz'],
    ['get', '/v3/accounts'],
    ['patch', '/v3/accounts/{id}'],
    ['get', '/v3/summary'],
    ['post', '/v3/api-tokens'],
    ['get', '/v3/api-tokens'],
    ['patch', '/v3/api-tokens/{id}'],
    ['delete', '/v3/api-tokens/{id}'],
    ['get', '/v3/members'],
    ['post', '/v3/members'],
    ['patch', '/v3/members/{userId}'],
    ['delete', '/v3/members/{userId}'],
    ['post', '/v3/members/{userId}/password-reset'],
    ['get', '/v3/members/invitations'],
    ['delete', '/v3/members/invitations/{id}'],
  ] as const;

  let doc: any;
  /** Every route the app serves, enumerated from the same app factory the service uses. */
  let served: Array<{ method: string; path: string; hasBody: boolean }>;

  beforeAll(async () => {
    const res = await service.call('GET', '/docs/json');
    expect(res.status).toBe(200);
    doc = res.body;
    const app = createHttpApp(service.runtime.ctx, service.runtime.plugins);
    served = app.routes
      .filter((r) => !r.path.startsWith('/docs'))
      // Web pages of the browser flows (sign-in, consent) are not API operations: hidden on purpose.
      .filter((r) => !(r.hooks as { detail?: { hide?: boolean } } | undefined)?.detail?.hide)
      .map((r) => ({
        method: r.method.toLowerCase(),
        path: r.path.replace(/:(\w+)/g, '{$1}'),
        hasBody: Boolean((r.hooks as { body?: unknown } | undefined)?.body),
      }));
  }, HOOK_TIMEOUT);

  test('is an OpenAPI 3 document', () => {
    expect(String(doc.openapi)).toStartWith('3.');
    expect(doc.info.title).toBeString();
    expect(doc.paths).toBeObject();
  });

  test('documents every known v3 path under its spec spelling', () => {
    // Spec 4.2 paths, e.g. "POST | `/v3/api-tokens`" — not `/v3/api-tokens/`.
    for (const [method, path] of KNOWN) {
      expect(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`).toBeDefined();
    }
    // The enumeration of served routes is not empty or partial.
    for (const [method, path] of KNOWN) {
      expect(served.some((r) => r.method === method && r.path === path), `served ${method.toUpperCase()} ${path}`).toBe(true);
    }
  });

  test('every served route has a documented success response schema, and a request body schema when it takes a body', () => {
    // ARCHITECTURE: what the spec leaves "not shown" we design "and write it into the OpenAPI document".
    const problems: string[] = [];
    for (const route of served) {
      const name = `${route.method.toUpperCase()} ${route.path}`;
      const op = doc.paths[route.path]?.[route.method];
      if (!op) {
        problems.push(`${name}: not documented`);
        continue;
      }
      const success = Object.keys(op.responses ?? {}).filter((code) => /^2\d\d$/.test(code));
      // The authorize endpoint "always 302" (spec 4.1): its success is the redirect.
      const redirects = Object.keys(op.responses ?? {}).filter((code) => /^3\d\d$/.test(code));
      if (success.length === 0 && redirects.length === 0) problems.push(`${name}: no 2xx or 3xx response`);
      for (const code of success) {
        const schema = op.responses[code]?.content?.['application/json']?.schema;
        if (!schema || Object.keys(schema).length === 0) problems.push(`${name}: ${code} has no JSON schema`);
      }
      const takesBody = route.hasBody || ['post', 'put', 'patch'].includes(route.method);
      if (takesBody) {
        // JSON for most routes; raw media uploads document their bytes under their own content type.
        const schema = Object.values(op.requestBody?.content ?? {}).map((c: any) => c?.schema)[0];
        if (!schema || Object.keys(schema).length === 0) problems.push(`${name}: no request body schema`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('documents nothing that is not served', () => {
    const served_ = new Set(served.map((r) => `${r.method} ${r.path}`));
    const extra: string[] = [];
    for (const [path, methods] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(methods)) {
        if (['get', 'post', 'put', 'patch', 'delete'].includes(method) && !served_.has(`${method} ${path}`)) extra.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(extra).toEqual([]);
  });

  test('declares the apikey security scheme on authenticated routes', () => {
    // Spec 5.1: "Header `apikey: <API_KEY>`".
    expect(doc.components?.securitySchemes?.apikey).toMatchObject({ type: 'apiKey', in: 'header', name: 'apikey' });
    expect(doc.paths['/v3/accounts'].get.security).toEqual([{ apikey: [] }, { oauth2: [] }, { session: [] }]);
    // Issue 22: the sign-in session cookie of /signin.
    expect(doc.components?.securitySchemes?.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: '__Host-sb_session' });
  });
});
