import { beforeAll, expect, test } from 'bun:test';
import { createHttpApp } from '../../adapters/http/app.ts';
import { routeKey } from '../../adapters/http/route-scopes.ts';
import { baseStores } from '../../adapters/postgres/stores.ts';
import { registerClient } from '../../core/oauth/clients.ts';
import { SCOPES, satisfies, type Scope } from '../../core/oauth/scopes.ts';
import { hashSecret } from '../../core/tokens/secret.ts';
import { useTestService, useOwner } from '../support/service.ts';
import { HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 5: "Every existing and future route declares its scope in one place ... and a test walks
 * every route to prove none is reachable without its scope." Every route that refuses a caller
 * without credentials is looked up in the route scope table; a bearer token lacking the route's
 * scope gets 403 insufficient_scope, and a route closed to OAuth clients refuses even a token
 * holding every scope (spec 5.3).
 */
let routes: Array<{ method: string; path: string }>;
let clientId: string;
let consentId: string;

const service = useTestService();
const owner = useOwner(service, { plan: 'PRO' });

beforeAll(async () => {
  const ctx = service.runtime.ctx;
  routes = createHttpApp(ctx, service.runtime.plugins)
    .routes.filter((r) => ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].includes(r.method))
    .map((r) => ({ method: r.method, path: r.path }));
  const client = await registerClient(baseStores(ctx.db), { ...ctx, issuer: ctx.config.publicUrl, dynamicRegistration: true }, { redirect_uris: ['https://app.example/cb'] });
  clientId = client.client_id;
  consentId = crypto.randomUUID();
  const now = new Date();
  await baseStores(ctx.db).oauth.insertConsent({ id: consentId, clientId, userId: owner.userId, workspaceId: owner.workspaceId, scopes: [...SCOPES], createdAt: now, updatedAt: now });
}, HOOK_TIMEOUT);

/** An access token with exactly these scopes, as the token endpoint would store it. */
async function tokenWith(scopes: Scope[]): Promise<string> {
  const secret = `sbat_test_${crypto.randomUUID()}`;
  await baseStores(service.runtime.ctx.db).oauth.insertToken({
    id: crypto.randomUUID(),
    hash: hashSecret(secret),
    kind: 'ACCESS',
    state: 'ACTIVE',
    consentId,
    clientId,
    userId: owner.userId,
    workspaceId: owner.workspaceId,
    scopes,
    resource: null,
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + 3600_000),
  });
  return secret;
}

function concrete(path: string): string {
  return path.replace(/:(\w+)/g, () => crypto.randomUUID());
}

async function call(method: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${service.url}${concrete(path)}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: ['GET', 'DELETE'].includes(method) ? undefined : '{}',
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}

test('every route that needs a credential declares its OAuth scope, and no row names a route that is not served', async () => {
  const table = service.runtime.ctx.routeScopes;
  const undeclared: string[] = [];
  for (const route of routes) {
    const anonymous = await call(route.method, route.path);
    // API credentials (apikey or bearer) are asked for with a challenge naming the resource
    // metadata; client authentication (token endpoint) and signed links answer 401 otherwise.
    if (anonymous.status !== 401 || !anonymous.headers.get('www-authenticate')?.includes('resource_metadata=')) continue;
    if (!table.has(routeKey(route.method, route.path))) undeclared.push(routeKey(route.method, route.path));
  }
  expect(undeclared).toEqual([]);
  const served = new Set(routes.map((r) => routeKey(r.method, r.path)));
  expect([...table.keys()].filter((key) => !served.has(key))).toEqual([]);
}, HOOK_TIMEOUT);

test('no route is reachable with a bearer token lacking its scope; closed routes refuse every token', async () => {
  const table = service.runtime.ctx.routeScopes;
  const everything = await tokenWith([...SCOPES]);
  const problems: string[] = [];
  for (const route of routes) {
    const key = routeKey(route.method, route.path);
    if (!table.has(key)) continue;
    const required = table.get(key)!;
    if (required !== null && required.length === 0) continue; // the MCP endpoint: its tools check their own scopes
    if (required === null) {
      const res = await call(route.method, route.path, { authorization: `Bearer ${everything}` });
      if (res.status !== 403 || res.body.error !== 'insufficient_scope' || !String(res.body.error_description).includes('not available to OAuth clients')) {
        problems.push(`${key}: closed to OAuth, but a token with every scope got ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
      }
      continue;
    }
    // Every scope except those that would cover the route.
    const others = SCOPES.filter((s) => !satisfies([s], required));
    const lacking = await call(route.method, route.path, { authorization: `Bearer ${await tokenWith(others)}` });
    if (lacking.status !== 403 || lacking.body.error !== 'insufficient_scope') {
      problems.push(`${key}: a token without ${required.join('/')} got ${lacking.status}`);
    } else if (!lacking.headers.get('www-authenticate')?.includes(`scope="${required[0]}"`)) {
      problems.push(`${key}: the challenge does not name ${required[0]}`);
    }
    // With the scope the route is reached (whatever it then answers for a made-up id).
    const holding = await call(route.method, route.path, { authorization: `Bearer ${await tokenWith([required[0]!])}` });
    if (holding.status === 401 || holding.body?.error === 'insufficient_scope') problems.push(`${key}: a token with ${required[0]} was refused (${holding.status})`);
  }
  expect(problems).toEqual([]);
}, HOOK_TIMEOUT);
