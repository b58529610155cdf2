import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestService, type TestService } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 19, section 2: "authentication and role checks run before body validation". A member
 * whose role may not use a route gets 403 (spec 7.2 standard shape) even for a malformed body,
 * so the route's schema rules are not shown to them; a role that may use it still gets 400.
 */

let service: TestService;
let owner: { userId: string; workspaceId: string; token: string };
let agent: { token: string };
let manager: { token: string };
const NIL = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  service = await startTestService();
  owner = await service.bootstrap();
  agent = await memberWithToken(service, owner, 'AGENT');
  manager = await memberWithToken(service, owner, 'MANAGER');
}, HOOK_TIMEOUT);

afterAll(async () => {
  await service?.stop();
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
