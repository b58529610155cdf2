import { beforeAll, describe, expect, test } from 'bun:test';
import { createHttpApp } from '../../adapters/http/app.ts';
import { can, type Access, type Capability, type Role } from '../../core/identity/roles.ts';
import { useTestService } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 19, section 2: "authentication and role checks run before body validation". A member
 * whose role may not use a route gets 403 (spec 7.2 standard shape) even for a malformed body,
 * so the route's schema rules are not shown to them; a role that may use it still gets 400.
 */

let owner: { userId: string; workspaceId: string; token: string };
let agent: { token: string };
let manager: { token: string };
let admin: { token: string };
const NIL = '00000000-0000-4000-8000-000000000000';

const service = useTestService();

beforeAll(async () => {
  // PRO: a write the role may make gets past the plan gate to its 404 (no 403 of the plan).
  owner = await service.bootstrap({ plan: 'PRO' });
  agent = await memberWithToken(service, owner, 'AGENT');
  manager = await memberWithToken(service, owner, 'MANAGER');
  admin = await memberWithToken(service, owner, 'ADMIN');
}, HOOK_TIMEOUT);

/** Write routes an Agent may not use, each with a body its schema refuses. */
const REFUSED: Array<[method: string, path: string, body: unknown]> = [
  ['POST', '/v3/api-tokens', { name: 42 }],
  ['PATCH', `/v3/api-tokens/${NIL}`, { refreshToken: 'yes' }],
  ['POST', '/v3/members', { email: 'not an email', roles: [] }],
  ['PATCH', `/v3/members/${NIL}`, { roles: 'AGENT' }],
  ['POST', '/v3/connections', { name: '' }],
  ['PATCH', `/v3/connections/${NIL}`, { name: 7 }],
  ['POST', `/v3/connections/${NIL}/chats/messages`, { to: 5 }],
  ['POST', `/v3/connections/${NIL}/chats/messages/send-template`, { to: '1' }],
  ['POST', `/v3/connections/${NIL}/templates`, { name: 1 }],
  ['POST', `/v3/connections/${NIL}/media/tickets`, { mimetype: 3 }],
  ['POST', '/v3/webhooks', { url: 12 }],
  ['PATCH', `/v3/webhooks/${NIL}`, { url: 12 }],
  ['POST', '/v3/oauth/clients', { redirect_uris: 'x' }],
  ['PATCH', `/v3/accounts/${NIL}`, { name: '' }],
  ['POST', '/v3/helpdesk/labels', { name: 9 }],
  ['PATCH', `/v3/helpdesk/labels/${NIL}`, { name: 9 }],
  ['POST', '/v3/helpdesk/webhooks', { url: 9 }],
  ['POST', '/v3/helpdesk/teams', { name: 9 }],
  ['POST', '/v3/helpdesk/sla-policies', { name: 9 }],
  ['POST', '/v3/helpdesk/canned-responses', { shortCode: 9 }],
  ['POST', '/v3/helpdesk/inboxes', { name: 9 }],
  ['POST', `/v3/connections/${NIL}/chats/messages/send-flow`, { to: 9 }],
  ['POST', `/v3/connections/${NIL}/flows`, { name: 9 }],
  ['PUT', `/v3/helpdesk/teams/${NIL}/members`, { userIds: 'all' }],
];

describe('an Agent sending an invalid body to a route their role may not use', () => {
  for (const [method, path, body] of REFUSED) {
    test(`${method} ${path}: 403, not 400; an Owner gets 400`, async () => {
      const refused = await service.call(method, path, { apikey: agent.token, body });
      expectStandardError(refused, 403, 'Forbidden');
      const invalid = await service.call(method, path, { apikey: owner.token, body });
      expectStandardError(invalid, 400, 'Bad Request');
    });
  }
});

describe('roles that may use a route are not refused early', () => {
  test('an Owner creates an API token', async () => {
    const res = await service.call('POST', '/v3/api-tokens', { apikey: owner.token, body: { name: 'allowed' } });
    expect(res.status).toBe(201);
  });

  test('a Manager creates and renames a connection, and sends on it', async () => {
    const created = await service.call('POST', '/v3/connections', { apikey: manager.token, body: { name: 'desk' } });
    expect(created.status).toBe(201);
    const renamed = await service.call('PATCH', `/v3/connections/${created.body.id}`, { apikey: manager.token, body: { name: 'front desk' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('front desk');
    const sent = await service.call('POST', `/v3/connections/${created.body.id}/chats/messages`, { apikey: manager.token, body: { to: '15550001111', text: 'hello' } });
    expect(sent.status).not.toBe(403);
  });

  test('an Agent still reads what their role may read', async () => {
    expect((await service.call('GET', '/v3/members', { apikey: agent.token })).status).toBe(200);
    expect((await service.call('GET', '/v3/connections', { apikey: agent.token })).status).toBe(200);
  });
});

/**
 * Every write route of the helpdesk, campaigns, v2 and sandbox groups, with the capability its
 * use case authorizes before it looks anything up (read from core), or `core` where the use case
 * finds the thing first: an Agent who may not see it gets 404 there, so the role check stays in
 * core, after visibility, and no early 403 may replace that 404.
 */
const WRITE_ROUTES: Record<string, readonly [Capability, Access] | 'core'> = {
  'POST /v3/connections/:id/sandbox/messages': ['connections', 'write'],
  'POST /v3/connections/:id/sandbox/receipts': ['connections', 'write'],
  'POST /v3/connections/:id/sandbox/presence': ['connections', 'write'],
  'POST /v3/connections/:id/sandbox/edits': ['connections', 'write'],
  'POST /v3/connections/:id/sandbox/deletes': ['connections', 'write'],
  'POST /v3/campaigns/opt-outs': ['messages.send', 'write'],
  'DELETE /v3/campaigns/opt-outs/:phone': ['messages.send', 'write'],
  'POST /v3/campaigns': ['messages.send', 'write'],
  'POST /v3/campaigns/:id/launch': ['messages.send', 'write'],
  'POST /v3/campaigns/:id/pause': ['messages.send', 'write'],
  'POST /v3/campaigns/:id/resume': ['messages.send', 'write'],
  'POST /v3/campaigns/:id/cancel': ['messages.send', 'write'],
  'DELETE /v3/campaigns/:id': ['messages.send', 'write'],
  'POST /v3/helpdesk/inboxes': ['helpdesk.configure', 'write'],
  'PATCH /v3/helpdesk/inboxes/:id': 'core',
  'DELETE /v3/helpdesk/inboxes/:id': 'core',
  'PUT /v3/helpdesk/inboxes/:id/members': 'core',
  'POST /v3/helpdesk/contacts': ['helpdesk.work', 'write'],
  'PATCH /v3/helpdesk/contacts/:id': 'core',
  'DELETE /v3/helpdesk/contacts/:id': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/contacts/:id/merge': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/contacts/import': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/contacts/:id/notes': 'core',
  'DELETE /v3/helpdesk/contacts/:id/notes/:noteId': 'core',
  'POST /v3/helpdesk/conversations': 'core',
  'PATCH /v3/helpdesk/conversations/:id': 'core',
  'POST /v3/helpdesk/conversations/:id/status': 'core',
  'POST /v3/helpdesk/conversations/:id/labels': 'core',
  'POST /v3/helpdesk/conversations/:id/read': 'core',
  'POST /v3/helpdesk/conversations/:id/messages': 'core',
  'PATCH /v3/helpdesk/conversations/:id/messages/:messageId': 'core',
  'DELETE /v3/helpdesk/conversations/:id/messages/:messageId': 'core',
  'DELETE /v3/helpdesk/conversations/:id': 'core',
  'POST /v3/helpdesk/teams': ['helpdesk.configure', 'write'],
  'PATCH /v3/helpdesk/teams/:id': ['helpdesk.configure', 'write'],
  'DELETE /v3/helpdesk/teams/:id': ['helpdesk.configure', 'write'],
  'PUT /v3/helpdesk/teams/:id/members': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/labels': ['helpdesk.configure', 'write'],
  'PATCH /v3/helpdesk/labels/:id': ['helpdesk.configure', 'write'],
  'DELETE /v3/helpdesk/labels/:id': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/conversations/:id/attachments': 'core',
  'POST /v3/helpdesk/inboxes/:id/sync': 'core',
  'POST /v3/helpdesk/webhooks': ['helpdesk.configure', 'write'],
  'PATCH /v3/helpdesk/webhooks/:id': ['helpdesk.configure', 'write'],
  'DELETE /v3/helpdesk/webhooks/:id': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/webhooks/:id/test': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/webhooks/:id/deliveries/:deliveryId/redeliver': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/agent-bots': ['helpdesk.configure', 'write'],
  'PATCH /v3/helpdesk/agent-bots/:id': ['helpdesk.configure', 'write'],
  'DELETE /v3/helpdesk/agent-bots/:id': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/agent-bots/:id/token/rotate': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/agent-bots/:id/signing-secret/rotate': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/agent-bots/:id/deliveries/:deliveryId/redeliver': ['helpdesk.configure', 'write'],
  'PUT /v3/helpdesk/ai-settings': ['helpdesk.ai', 'write'],
  'POST /v3/helpdesk/conversations/:id/ai/suggest-reply': 'core',
  'POST /v3/helpdesk/conversations/:id/ai/summarize': 'core',
  'PATCH /v3/helpdesk/profile/availability': ['helpdesk.work', 'write'],
  'PUT /v3/helpdesk/inboxes/:id/assignment': 'core',
  'PUT /v3/helpdesk/inboxes/:id/business-hours': 'core',
  'PUT /v3/helpdesk/inboxes/:id/out-of-office': 'core',
  'POST /v3/helpdesk/sla-policies': ['helpdesk.configure', 'write'],
  'PATCH /v3/helpdesk/sla-policies/:id': ['helpdesk.configure', 'write'],
  'DELETE /v3/helpdesk/sla-policies/:id': ['helpdesk.configure', 'write'],
  'PATCH /v3/helpdesk/conversations/:id/sla': 'core',
  'PUT /v3/helpdesk/inboxes/:id/csat': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/notifications/read-all': ['helpdesk.work', 'read'],
  'POST /v3/helpdesk/notifications/:id/read': ['helpdesk.work', 'read'],
  'POST /v3/helpdesk/canned-responses': ['helpdesk.configure', 'write'],
  'PATCH /v3/helpdesk/canned-responses/:id': ['helpdesk.configure', 'write'],
  'DELETE /v3/helpdesk/canned-responses/:id': ['helpdesk.configure', 'write'],
  'POST /v3/helpdesk/macros': ['helpdesk.work', 'write'],
  'PATCH /v3/helpdesk/macros/:id': 'core',
  'DELETE /v3/helpdesk/macros/:id': 'core',
  'POST /v3/helpdesk/conversations/:id/macros/:macroId/run': 'core',
  'POST /v2/connections/:id/chats/:remoteJid/presence': ['messages.send', 'write'],
  'POST /v2/connections/:id/chats/:remoteJid/messages': ['messages.send', 'write'],
  'POST /v2/connections/:id/templates': ['connections', 'write'],
  'POST /v2/connections/:id/verifications': ['messages.send', 'write'],
  'POST /v2/verifications': ['messages.send', 'write'],
};

/** Bodies that break the schema of routes where `{}` is valid (every field optional); `{}` elsewhere. */
const INVALID: Record<string, unknown> = {
  'PATCH /v3/helpdesk/teams/:id': { name: 9 },
  'PATCH /v3/helpdesk/labels/:id': { name: 9 },
  'PATCH /v3/helpdesk/webhooks/:id': { url: 9 },
  'PATCH /v3/helpdesk/agent-bots/:id': { name: 9 },
  'PATCH /v3/helpdesk/sla-policies/:id': { name: 9 },
  'PATCH /v3/helpdesk/canned-responses/:id': { shortCode: 9 },
};

/** Routes whose body has no fields: no object is invalid, so a role that may use them reaches the use case. */
/** Routes that read their raw body themselves (no schema): an empty one is invalid there too. */
const RAW_BODIES = new Set(['POST /v3/helpdesk/contacts/import']);

const NO_FIELDS = new Set([
  'POST /v3/campaigns/:id/launch',
  'POST /v3/campaigns/:id/pause',
  'POST /v3/campaigns/:id/resume',
  'POST /v3/campaigns/:id/cancel',
  'POST /v3/helpdesk/webhooks/:id/test',
  'POST /v3/helpdesk/webhooks/:id/deliveries/:deliveryId/redeliver',
  'POST /v3/helpdesk/agent-bots/:id/token/rotate',
  'POST /v3/helpdesk/agent-bots/:id/signing-secret/rotate',
  'POST /v3/helpdesk/agent-bots/:id/deliveries/:deliveryId/redeliver',
  'POST /v3/helpdesk/notifications/read-all',
  'POST /v3/helpdesk/notifications/:id/read',
]);

/** Member routes of these groups; the agent bot API answers bot tokens, not members' roles. */
const COVERED = /^\/(v3\/helpdesk\/(?!agent-bot\/)|v3\/campaigns|v2\/|v3\/connections\/:id\/sandbox\/)/;
const WRITES = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** A concrete path: ids a nil UUID, a chat or phone a well-formed number (so only the body is wrong). */
const concrete = (path: string) => path.replace(/:(remoteJid|phone)\b/g, '15550001111').replace(/:\w+/g, NIL);

describe('every write route of the helpdesk, campaigns, v2 and sandbox', () => {
  let served: Array<{ key: string; hasBody: boolean }>;

  beforeAll(() => {
    served = createHttpApp(service.runtime.ctx, service.runtime.plugins)
      .routes.filter((r) => WRITES.includes(r.method) && COVERED.test(r.path))
      .map((r) => ({ key: `${r.method} ${r.path}`, hasBody: (r.hooks as { body?: unknown } | undefined)?.body !== undefined }));
  });

  test('is in the table (a new route needs its row: its capability, or core)', () => {
    expect(served.length).toBeGreaterThan(60);
    expect(served.map((r) => r.key).sort()).toEqual(Object.keys(WRITE_ROUTES).sort());
  });

  test('a role without the capability gets 403 for an invalid body; a role with it gets 400 (a body without fields: not 403)', async () => {
    const members: Array<[Role, string]> = [
      ['AGENT', agent.token],
      ['MANAGER', manager.token],
      ['ADMIN', admin.token],
      ['OWNER', owner.token],
    ];
    const mismatches: string[] = [];
    for (const { key, hasBody } of served) {
      const expected = WRITE_ROUTES[key];
      if (expected === undefined || expected === 'core') continue;
      const [method, path] = key.split(' ') as [string, string];
      for (const [role, token] of members) {
        const res = await service.call(method, concrete(path), { apikey: token, ...(hasBody && { body: INVALID[key] ?? {} }) });
        const allowed = can([role], ...expected);
        const invalid = (hasBody && !NO_FIELDS.has(key)) || RAW_BODIES.has(key);
        const ok = !allowed ? res.status === 403 && res.body?.error === 'Forbidden' : invalid ? res.status === 400 && res.body?.error === 'Bad Request' : res.status !== 403 && res.status !== 400;
        if (!ok) mismatches.push(`${key} as ${role}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  test('where core finds the thing first, an Agent is not refused early: the 400 of the body, or the 404 of what they cannot see', async () => {
    const mismatches: string[] = [];
    for (const { key, hasBody } of served) {
      if (WRITE_ROUTES[key] !== 'core') continue;
      const [method, path] = key.split(' ') as [string, string];
      const res = await service.call(method, concrete(path), { apikey: agent.token, ...(hasBody && { body: INVALID[key] ?? {} }) });
      if (![400, 404].includes(res.status)) mismatches.push(`${key}: ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('an Agent writing to a helpdesk thing they cannot see gets 404, not 403', () => {
  const VALID: Array<[method: string, path: string, body?: unknown]> = [
    ['PUT', `/v3/helpdesk/inboxes/${NIL}/assignment`, { enabled: false }],
    ['POST', `/v3/helpdesk/inboxes/${NIL}/sync`, {}],
    ['PUT', `/v3/helpdesk/inboxes/${NIL}/business-hours`, { enabled: false }],
    ['PUT', `/v3/helpdesk/inboxes/${NIL}/out-of-office`, { enabled: false }],
    ['PATCH', `/v3/helpdesk/inboxes/${NIL}`, { name: 'renamed' }],
    ['PATCH', `/v3/helpdesk/conversations/${NIL}/sla`, { policyId: null }],
    ['DELETE', `/v3/helpdesk/conversations/${NIL}`],
  ];
  for (const [method, path, body] of VALID) {
    test(`${method} ${path}`, async () => {
      expectStandardError(await service.call(method, path, { apikey: agent.token, ...(body !== undefined && { body }) }), 404, 'Not Found');
    });
  }
});

describe('reads of these groups with a malformed query', () => {
  test('an Agent gets 403 from campaigns, agent bots and CSAT answers, an Owner the 400', async () => {
    for (const path of ['/v3/campaigns?status=NOPE', '/v3/helpdesk/agent-bots?page=x', '/v3/helpdesk/csat-responses?page=x', '/v3/campaigns/opt-outs?per_page=x']) {
      expectStandardError(await service.call('GET', path, { apikey: agent.token }), 403, 'Forbidden');
      expectStandardError(await service.call('GET', path, { apikey: owner.token }), 400, 'Bad Request');
    }
  });
});
